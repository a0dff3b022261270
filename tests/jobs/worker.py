"""A real Celery worker in a subprocess, against the test database and the real Redis."""

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    """The database this test session uses (pytest-django's test_ database)."""
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Worker:
    """`celery -A config worker` on its own queue; kill its children, kill it, restart it."""

    def __init__(self, media_root: Path, concurrency: int = 2, **env: str) -> None:
        self.queue = f"test-{uuid.uuid4().hex[:8]}"
        self.concurrency = concurrency
        self.env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
            "CELERY_QUEUE": self.queue,
            "MEDIA_ROOT": str(media_root),
            "SECRET_KEY": "worker-tests-" + "x" * 40,
            "HTTPS": "0",
            "DEBUG": "0",
            "PYTHONUNBUFFERED": "1",
            **env,
        }
        self.process: subprocess.Popen | None = None
        self.log = media_root / f"worker-{self.queue}.log"

    def start(self) -> None:
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "-Q",
            self.queue,
            "-c",
            str(self.concurrency),
            "--pool",
            "prefork",
            "-n",
            f"{self.queue}@%h",
            "--without-gossip",
            "--without-mingle",
            "--loglevel",
            "INFO",
        ]
        offset = self.log.stat().st_size if self.log.exists() else 0
        log = self.log.open("ab")
        self.process = subprocess.Popen(
            command,
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if b" ready." in self.log.read_bytes()[offset:]:
                return
            if self.process.poll() is not None:
                raise RuntimeError(f"worker exited: {self.log.read_text()[-3000:]}")
            time.sleep(0.2)
        raise RuntimeError(f"worker not ready: {self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL the whole worker, children included: nothing gets to clean up."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
