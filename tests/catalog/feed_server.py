"""A real HTTP server on 127.0.0.1 that serves recorded feed responses, or misbehaves on cue."""

import contextlib
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    delay_s: float = 0.0
    declared_length: int | None = None  # lie about Content-Length (truncation)


@dataclass
class FeedServer:
    routes: dict[str, Route] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)

    def serve_directory(self, root: Path, prefix: str = "") -> None:
        for path in root.rglob("*"):
            if path.is_file():
                self.routes[f"{prefix}/{path.relative_to(root).as_posix()}"] = Route(
                    path.read_bytes()
                )

    def start(self) -> str:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                server.requests.append(self.path)
                route = server.routes.get(path, Route(b"not found", 404))
                if route.delay_s:
                    time.sleep(route.delay_s)
                self.send_response(route.status)
                length = route.declared_length or len(route.body)
                self.send_header("Content-Length", str(length))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(route.body)

            def log_message(self, *args) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._httpd.server_port}"

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
