"""A loopback stand-in for the Hugging Face Hub: recorded files served in the Hub's layout.

The app's real huggingface_hub code talks to it over HTTP on 127.0.0.1 (settings.HF_ENDPOINT
points here), so the tests exercise the library's own requests, headers and error mapping
without the network. What it answers, as the Hub does (huggingface_hub 2.4.0 reads these in
file_download.get_hf_file_metadata and utils/_http.hf_raise_for_status):

- HEAD/GET /<owner>/<name>/resolve/<revision>/<file>: 200 with ETag, X-Repo-Commit and
  Content-Length (GET: the bytes); <revision> is "main", the commit, or a 7+ character prefix.
- a missing repository: 404 with X-Error-Code: RepoNotFound; a private one without its token:
  401 RepoNotFound (the Hub answers an anonymous caller the same for both).
- a gated repository: 401 (no token) or 403 (a token without access), X-Error-Code: GatedRepo.
- an unknown revision: 404 RevisionNotFound; a missing file: 404 EntryNotFound.
- a "hanging" repository: the request is held open without an answer until the server stops.

The commits are made up (sha1 of the repository id); the files are real (see RECORDED).
"""

import hashlib
import json
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

MODELS_DIR = Path(__file__).resolve().parents[2] / "advisor" / "data" / "models"

# metadata.total_size of meta-llama/Llama-3.1-8B's model.safetensors.index.json (bf16, four
# shards): 16,060,522,496 bytes = 8,030,261,248 parameters x 2. Read in public sources through
# the search tool: the Hugging Face docs' "Transformers repository files" section (the index
# with lm_head in model-00004-of-00004.safetensors), a notebook's table row
# "meta-llama/Llama-3.1-8B ... 16060522496", and a write-up saying "The checkpoint's index file
# states total_size 16060522496. That is 8,030,261,248 x 2".
LLAMA_3_1_8B_TOTAL_SIZE = 16_060_522_496
LLAMA_3_1_8B_INDEX = {
    "metadata": {"total_size": LLAMA_3_1_8B_TOTAL_SIZE},
    "weight_map": {
        "lm_head.weight": "model-00004-of-00004.safetensors",
        "model.embed_tokens.weight": "model-00001-of-00004.safetensors",
    },
}

# openai/gpt-oss-20b's metadata.total_size, as tests/advisor/test_quantized_checkpoints.py
# records it (quoted in a public discussion of the checkpoint).
GPT_OSS_20B_TOTAL_SIZE = 13_761_264_768
GPT_OSS_20B_INDEX = {"metadata": {"total_size": GPT_OSS_20B_TOTAL_SIZE}, "weight_map": {}}


def commit_of(repo_id: str) -> str:
    return hashlib.sha1(repo_id.encode()).hexdigest()


@dataclass
class Repo:
    files: dict[str, bytes]
    gated: bool = False
    private: bool = False
    hang: bool = False
    tokens: frozenset[str] = frozenset()  # the tokens that may read a gated or private repo
    commit: str = ""


def bundled_config(slug: str) -> bytes:
    return (MODELS_DIR / f"{slug}.json").read_bytes()


@dataclass
class HubServer:
    repos: dict[str, Repo] = field(default_factory=dict)
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)

    def add(self, repo_id: str, repo: Repo) -> None:
        repo.commit = repo.commit or commit_of(repo_id)
        self.repos[repo_id] = repo

    def start(self) -> str:
        self._stopping = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_HEAD(self) -> None:
                server._answer(self, body=False)

            def do_GET(self) -> None:
                server._answer(self, body=True)

            def log_message(self, *args: object) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _answer(self, handler: BaseHTTPRequestHandler, *, body: bool) -> None:
        auth = handler.headers.get("Authorization")
        self.requests.append((handler.command, handler.path, auth))
        parts = unquote(handler.path.split("?", 1)[0]).lstrip("/").split("/")
        if len(parts) < 5 or parts[2] != "resolve":
            return self._error(handler, 404, "RepoNotFound")
        repo_id, revision, filename = "/".join(parts[:2]), parts[3], "/".join(parts[4:])
        repo = self.repos.get(repo_id)
        if repo is None:
            return self._error(handler, 404, "RepoNotFound")
        token = auth.removeprefix("Bearer ") if auth else None
        if repo.private and token not in repo.tokens:
            return self._error(handler, 401 if token is None else 404, "RepoNotFound")
        if repo.gated and token not in repo.tokens:
            return self._error(handler, 401 if token is None else 403, "GatedRepo")
        if repo.hang:
            self._stopping.wait(30)
            return None
        if not (revision == "main" or (len(revision) >= 7 and repo.commit.startswith(revision))):
            return self._error(handler, 404, "RevisionNotFound")
        content = repo.files.get(filename)
        if content is None:
            return self._error(handler, 404, "EntryNotFound", commit=repo.commit)
        handler.send_response(200)
        handler.send_header("ETag", f'"{hashlib.sha1(content).hexdigest()}"')
        handler.send_header("X-Repo-Commit", repo.commit)
        handler.send_header("Content-Length", str(len(content)))
        handler.send_header("Content-Type", "application/json")
        handler.end_headers()
        if body:
            handler.wfile.write(content)
        return None

    @staticmethod
    def _error(
        handler: BaseHTTPRequestHandler, status: int, code: str, commit: str | None = None
    ) -> None:
        content = json.dumps({"error": code}).encode()
        handler.send_response(status)
        handler.send_header("X-Error-Code", code)
        if commit:
            handler.send_header("X-Repo-Commit", commit)
        handler.send_header("Content-Length", str(len(content)))
        handler.end_headers()
        if handler.command == "GET":
            handler.wfile.write(content)


def recorded_hub() -> HubServer:
    """The recorded repositories the tests use."""
    hub = HubServer()
    llama = bundled_config("llama-3.1-8b")
    index = json.dumps(LLAMA_3_1_8B_INDEX).encode()
    hub.add(
        "meta-llama/Llama-3.1-8B",
        Repo(
            files={"config.json": llama, "model.safetensors.index.json": index},
            gated=True,
            tokens=frozenset({"hf_test_token_with_access"}),
        ),
    )
    # The Llama config under another name, public: no bundled model answers for it.
    hub.add(
        "test-org/llama-copy",
        Repo(files={"config.json": llama, "model.safetensors.index.json": index}),
    )
    # Mistral 7B's config with Llama 3.1 8B's index: the stored size does not match.
    hub.add(
        "test-org/mismatched-index",
        Repo(
            files={
                "config.json": bundled_config("mistral-7b-v0.1"),
                "model.safetensors.index.json": index,
            }
        ),
    )
    hub.add("openai-community/gpt2", Repo(files={"config.json": bundled_config("gpt2")}))
    # A quantised checkpoint (MXFP4 experts): its stored size is not parameters x bf16.
    hub.add(
        "test-org/gpt-oss-20b-copy",
        Repo(
            files={
                "config.json": bundled_config("gpt-oss-20b"),
                "model.safetensors.index.json": json.dumps(GPT_OSS_20B_INDEX).encode(),
            }
        ),
    )
    hub.add(
        "test-org/private-model",
        Repo(
            files={"config.json": bundled_config("qwen2.5-7b")},
            private=True,
            tokens=frozenset({"hf_test_token_with_access"}),
        ),
    )
    hub.add("test-org/hanging", Repo(files={"config.json": llama}, hang=True))
    oversized = json.loads(llama) | {"padding": "x" * (2 * 1024 * 1024)}
    hub.add("test-org/oversized", Repo(files={"config.json": json.dumps(oversized).encode()}))
    hub.add("test-org/no-config", Repo(files={"README.md": b"# not a transformers model\n"}))
    hub.add("test-org/not-json", Repo(files={"config.json": b"{not json"}))
    return hub


class SlowHub:
    """A Hub that accepts connections and then never answers (`trickle=False`), or answers a
    byte a second (`trickle=True`): per-read timeouts never fire on the second, and nothing
    but a deadline over the whole read ends either."""

    def __init__(self, *, trickle: bool) -> None:
        self.trickle = trickle
        self.connections = 0
        self._stopping = threading.Event()
        self._sockets: list[socket.socket] = []

    def start(self) -> str:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=5)
        for sock in [*self._sockets, self._listener]:
            sock.close()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            self.connections += 1
            self._sockets.append(sock)
            if self.trickle:
                threading.Thread(target=self._trickle, args=(sock,), daemon=True).start()

    def _trickle(self, sock: socket.socket) -> None:
        answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Repo-Commit: " + b"0" * 40 + b"\r\n"
        for byte in answer:
            if self._stopping.wait(1.0):
                return
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                return
