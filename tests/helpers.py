"""Helpers more than one test package uses, in one place; the fixtures built on them live in the
conftest.py files. Sections: teams and clients, uploads and services, chart markup, a Redis of
the test's own, a real Celery worker, a browser's sign-in."""

import gzip
import html
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import textwrap
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.utils.safestring import SafeString
from kombu import pools
from rest_framework.test import APIClient

from accounts.models import ApiToken, Membership, Team
from accounts.services import api_token_create
from config.celery import app as celery_app
from jobs.domain.codescan import Finding, ScanReport, scan_paths
from jobs.domain.traces import TraceError, analyze_traces

if TYPE_CHECKING:  # Playwright is only there for the browser tests
    from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parents[1]

# --- teams and clients: two people per team, each with an API token ----------------------------

PASSWORD = "correct-horse-battery-staple"


@dataclass
class TeamSetup:
    team: Team
    admin: object
    member: object
    admin_token: ApiToken
    admin_raw_token: str
    member_token: ApiToken
    member_raw_token: str


def make_team(name: str) -> TeamSetup:
    users = get_user_model().objects
    team = Team.objects.create(name=name, slug=name.lower())
    admin = users.create_user(f"{name.lower()}-admin", password=PASSWORD)
    member = users.create_user(f"{name.lower()}-member", password=PASSWORD)
    Membership.objects.create(team=team, user=admin, role=Membership.Role.ADMIN)
    Membership.objects.create(team=team, user=member, role=Membership.Role.MEMBER)
    admin_token, admin_raw = api_token_create(
        user=admin, team=team, name="admin tool", expires_in=timedelta(days=30)
    )
    member_token, member_raw = api_token_create(
        user=member, team=team, name="member tool", expires_in=timedelta(days=30)
    )
    return TeamSetup(team, admin, member, admin_token, admin_raw, member_token, member_raw)


def token_client(raw_token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw_token}")
    return client


def session_client(user) -> APIClient:
    client = APIClient(enforce_csrf_checks=False)
    client.force_login(user)
    return client


# --- uploads and the services a real job needs ------------------------------------------------

TRACES = ROOT / "tests" / "fixtures" / "traces"
DLRM = sorted((TRACES / "param/et_replay/tests/inputs/dlrm_kineto_8rank").glob("*.json.gz"))
SMALL_TRACE = TRACES / "hta/tests/data/triton_example/triton_example.json.gz"
LARGEST_TRACE = TRACES / "hta/tests/data/df_index_resolver/df_index_resolver.json.gz"
CODESCAN_REPO = ROOT / "tests" / "fixtures" / "codescan" / "repo"


def upload(path: Path, name: str | None = None) -> SimpleUploadedFile:
    return SimpleUploadedFile(name or path.name, path.read_bytes())


def distinct_copy(path: Path, index: int) -> SimpleUploadedFile:
    """The same trace, gzipped with another mtime: different bytes, so no report reuse."""
    data = gzip.decompress(path.read_bytes())
    return SimpleUploadedFile(
        f"{index}-{path.name}", gzip.compress(data, mtime=1_700_000_000 + index)
    )


def trace_refused_within(path: Path, match: str, within_s: float, **options) -> TraceError:
    """analyze_traces refuses `path` with a TraceError matching `match`, in under `within_s`."""
    started = time.monotonic()
    with pytest.raises(TraceError, match=match) as caught:
        analyze_traces([path], **options)
    assert time.monotonic() - started < within_s
    return caught.value


def repo_archive() -> bytes:
    """The sample repository (tests/fixtures/codescan/repo) as a .tar.gz upload."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(CODESCAN_REPO, arcname="repo")
    return buffer.getvalue()


def services_are_real() -> bool:
    return settings.DATABASES["default"]["ENGINE"].endswith("postgresql") and bool(
        settings.CELERY_BROKER_URL
    )


needs_real_services = pytest.mark.skipif(
    not services_are_real(),
    reason="a real worker needs PostgreSQL and Redis (make test uses them when they answer)",
)


# --- chart markup: what every chart (catalog, jobs and advisor alike) must be -----------------

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert(\"x\")</script> & 'q'"
APP_CSS = (settings.BASE_DIR / "static" / "css" / "app.css").read_text()
PAINTED = {"text", "rect", "circle", "line", "path", "polyline"}


def assert_chart_markup(svg: str, *, hostile: str = HOSTILE) -> ET.Element:
    """Checks `svg`, drawn with `hostile` as some of its text, and returns its parsed root: a
    SafeString of well-formed SVG with its text auto-escaped, no inline style (the pages' CSP
    refuses it), and colour only through classes static/css/app.css defines."""
    assert isinstance(svg, SafeString)  # templates may show it as {{ chart }} or {{ chart|safe }}
    assert "<script" not in svg
    assert "style=" not in svg and "<style" not in svg
    assert not re.search(r"#[0-9a-fA-F]{3,8}\b", svg), "a colour in the markup, not in app.css"
    root = ET.fromstring(svg)  # well-formed, so the escaped text reads back unchanged
    assert root.tag == f"{SVG}svg" and "chart" in root.get("class").split()
    assert any(hostile in (element.text or "") for element in root.iter())
    for element in root.iter():
        tag = element.tag.removeprefix(SVG)
        assert element.get("fill") in (None, "none") and element.get("stroke") is None, tag
        if tag not in PAINTED:
            continue
        classes = (element.get("class") or "").split()
        assert classes or tag == "text", f"an uncoloured <{tag}>"  # text defaults to ink
        for name in classes:
            assert re.search(rf"\.{re.escape(name)}(?![\w-])", APP_CSS), f".{name} not in app.css"
    return root


# --- a Redis of the test's own, on a free loopback port (never the machine's 6379) -------------
# A test can stop it, freeze it (SIGSTOP) and start it again on the same port, and point the
# cache and the Celery app at it.

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


def fresh_broker_connections() -> None:
    """Drop this process's broker connections, as a newly started process has none."""
    pools.reset()  # kombu's process-wide pools
    celery_app._after_fork()  # the app's references to them


@contextmanager
def celery_broker(url: str, settings) -> Iterator[None]:
    """Publish to `url` from this process; the connection pools are rebuilt for it."""
    settings.CELERY_BROKER_URL = url

    def repoint(to: str | None) -> None:
        # The write URL is what publishing uses (None: the configured broker_url).
        celery_app.conf.broker_write_url = to
        fresh_broker_connections()

    repoint(url)
    try:
        yield
    finally:
        repoint(None)


# --- a real Celery worker in a subprocess, against the test database and the real Redis --------


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


# --- a browser's sign-in (tests/e2e) -----------------------------------------------------------


def sign_in(page: "Page", site: str, username: str = "ada") -> None:
    page.goto(f"{site}/account/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


# Code scans ---------------------------------------------------------------------------------


def scan_files(tmp_path: Path, files: dict[str, str]) -> ScanReport:
    """Scan a repository made of `files` (name -> dedented text) under tmp_path/repo."""
    root = tmp_path / "repo"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    return scan_paths(root)


def findings_of(report: ScanReport, rule_id: str) -> list[Finding]:
    return [f for f in report.findings if f.rule_id == rule_id]


# Sizing ---------------------------------------------------------------------------------------

BUNDLED_MODELS_DIR = Path(__file__).resolve().parents[1] / "advisor" / "data" / "models"


def bundled_config(slug: str) -> dict:
    """A bundled model's config.json, as a fresh dict."""
    return json.loads((BUNDLED_MODELS_DIR / f"{slug}.json").read_text())


def page_errors(response, field: str) -> str:
    """The errors the sizing page shows next to `field`."""
    match = re.search(
        rf'<ul class="errorlist" id="id_{field}_errors">(.*?)</ul>', response.content.decode(), re.S
    )
    assert match, f"no errors shown for {field}"
    return html.unescape(match.group(1))


# --- the app under gunicorn (sync workers, as served), in a subprocess --------------------------


class Gunicorn:
    """`gunicorn config.wsgi:application` with the repository's gunicorn.conf.py, sync workers,
    DEBUG off, on a free loopback port; `env` overrides (DATABASE_URL, HF_ENDPOINT...)."""

    def __init__(self, workdir: Path, *, workers: int = 2, **env: str) -> None:
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        self.log = workdir / f"gunicorn-{self.port}.log"
        self.env = {
            **os.environ,
            "DEBUG": "0",
            "HTTPS": "0",
            "SECRET_KEY": "gunicorn-tests-" + "x" * 40,
            "ALLOWED_HOSTS": HOST,
            "VAR_DIR": str(workdir),
            "LOG_LEVEL": "WARNING",
            "THROTTLE_ANON": "100000/min",
            **env,
        }
        self.workers = workers
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = [
            str(Path(sys.executable).with_name("gunicorn")),
            "config.wsgi:application",
            "--bind",
            f"{HOST}:{self.port}",
            "--workers",
            str(self.workers),
        ]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited: {self.log.read_text()[-3000:]}")
            try:
                with socket.create_connection((HOST, self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"gunicorn did not listen: {self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


@contextmanager
def running_gunicorn(workdir: Path, **options) -> Iterator[Gunicorn]:
    server = Gunicorn(workdir, **options)
    server.start()
    try:
        yield server
    finally:
        server.stop()
