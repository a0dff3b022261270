"""A Redis of the test's own on a free loopback port (never the machine's 6379), which a test
can stop, freeze (SIGSTOP) and start again on the same port, and a way to point the cache and
the Celery app at it."""

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from kombu import pools

from config.celery import app as celery_app

HOST = "127.0.0.1"

needs_redis_server = pytest.mark.skipif(
    shutil.which("redis-server") is None, reason="fault tests start their own redis-server"
)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class RedisServer:
    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    def url(self, db: int = 0) -> str:
        return f"redis://{HOST}:{self.port}/{db}"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                HOST,
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection((HOST, self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server did not answer on port {self.port}")

    def freeze(self) -> None:
        os.kill(self.process.pid, signal.SIGSTOP)

    def thaw(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)

    def stop(self) -> None:
        """SIGKILL (after SIGCONT, so a frozen one dies too): connections are refused after."""
        if self.process and self.process.poll() is None:
            self.thaw()
            self.process.kill()
            self.process.wait(10)


@contextmanager
def running_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def cache_settings(url: str, settings) -> dict:
    """The configured Redis cache (its timeouts included), pointed at `url`."""
    if not settings.CACHES["default"]["BACKEND"].endswith("RedisCache"):
        pytest.skip("cache fault tests need CACHE_URL=redis://... (make test sets it)")
    return {"default": {**settings.CACHES["default"], "LOCATION": url}}


@contextmanager
def celery_broker(url: str, settings) -> Iterator[None]:
    """Publish to `url` from this process; the connection pools are rebuilt for it."""
    settings.CELERY_BROKER_URL = url

    def repoint(to: str | None) -> None:
        # The write URL is what publishing uses (None: the configured broker_url).
        celery_app.conf.broker_write_url = to
        pools.reset()  # kombu's process-wide pools, made for the old URL
        celery_app._after_fork()  # the app's references to them

    repoint(url)
    try:
        yield
    finally:
        repoint(None)
