"""One real server for the HTTP benchmarks: a throwaway database and gunicorn on loopback."""

import http.client
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from machine import PYTHON, ROOT

GUNICORN = ROOT / ".venv" / "bin" / "gunicorn"
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def server_env(workdir: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        # Anything that would point the server at another database, cache or broker.
        if key not in {"DATABASE_URL", "CACHE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DEBUG": "0",
            "HTTPS": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": HOST,
            "THROTTLE_ANON": "1000000/min",
            "THROTTLE_USER": "1000000/min",
            "THROTTLE_TEAM": "1000000/min",
            "VAR_DIR": str(workdir),
            "DATABASE_URL": f"sqlite:///{workdir / 'bench.sqlite3'}",
            "LOG_LEVEL": "WARNING",
        }
    )
    return env


@contextmanager
def throwaway_workdir(prefix: str) -> Iterator[Path]:
    """A temporary directory for VAR_DIR, the SQLite file and the server's log, deleted after."""
    workdir = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield workdir
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def prepare_database(env: dict[str, str]) -> dict:
    timings = {}
    for name, args in (
        ("migrate_s", ["migrate", "--no-input"]),
        ("load_catalog_s", ["load_catalog"]),
    ):
        started = time.perf_counter()
        done = subprocess.run(
            [str(PYTHON), "manage.py", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode:
            sys.exit(
                f"manage.py {' '.join(args)} failed:\n{done.stdout[-2000:]}{done.stderr[-4000:]}"
            )
        timings[name] = round(time.perf_counter() - started, 2)
    return timings


def request(
    method: str, port: int, path: str, body: bytes | None = None, timeout: float = 30.0
) -> tuple[int, bytes]:
    """One request on a fresh connection (gunicorn's sync workers close after each response)."""
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


class Server:
    def __init__(self, env: dict[str, str], workdir: Path, workers: int) -> None:
        self.port = free_port()
        self.log_path = workdir / "gunicorn.log"
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(
            [
                str(GUNICORN),
                "config.wsgi:application",
                "--bind",
                f"{HOST}:{self.port}",
                "--workers",
                str(workers),
                "--error-logfile",
                "-",
            ],
            cwd=ROOT,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                sys.exit(f"gunicorn exited early:\n{self.log_tail()}")
            try:
                status, _ = request("GET", self.port, "/healthz", timeout=5)
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        sys.exit(f"gunicorn did not answer /healthz within {timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._log.close()

    def tracebacks(self) -> int:
        """Tracebacks in the server's log (read after stop)."""
        return self.log_path.read_text(errors="replace").count("Traceback")
