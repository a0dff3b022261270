"""Take the README's and the docs' three screenshots (`make screenshots`): a sizing answer, a
trace report and a code-scan report, at 1440x900, written to docs/img/.

The app runs the embedded way, as `make run` serves it but in a temporary directory: SQLite and
uploads under it, Celery tasks in-process, the bundled catalogue loaded, one user in one team.
Debian's Chromium is driven by Playwright (its own browser download cannot work here), with the
flags the browser tests use. Nothing outside 127.0.0.1 is reached; the directory is removed at
the end.
"""

import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".venv" / "bin"
IMAGES = ROOT / "docs" / "img"
VIEWPORT = {"width": 1440, "height": 900}
# A PNG over this is too heavy for the README; the script says so rather than writing it quietly.
MAX_PNG_BYTES = 300 * 1024
# A real PyTorch profiler (Kineto) trace: ResNet-50 on a V100, from the TensorBoard plugin.
TRACE = (
    ROOT
    / "tests/fixtures/traces/kineto/tb_plugin/samples/resnet50_num_workers_0"
    / "worker0.1623143089861.pt.trace.json.gz"
)
CODE_REPO = ROOT / "tests/fixtures/codescan/repo"
SIZING_QUERY = "model=llama-3.1-70b&task=qlora&context_tokens=4096"
PLAN_QUERY = (
    "model=llama-3.1-8b&requests_per_second=40&prompt_tokens=2000&output_tokens=300"
    "&ttft_p95_ms=500&hourly_requests_per_second="
    "5,4,3,3,3,4,8,15,25,32,36,40,40,38,36,35,33,30,26,22,18,14,10,7"
)
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
USERNAME = "ada"
SERVER_START_TIMEOUT_S = 60
REPORT_TIMEOUT_MS = 120_000
CREATE_USER = """
from django.contrib.auth import get_user_model
from accounts.models import Membership, Team
team = Team.objects.create(name="Screenshots", slug="screenshots")
user = get_user_model().objects.create_user({username!r}, password={password!r})
Membership.objects.create(team=team, user=user)
"""


def embedded_environment(var_dir: Path) -> dict[str, str]:
    """`make run`'s embedded mode under var_dir, whatever services the shell points at."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "CACHE_URL"}
    }
    return env | {
        "VAR_DIR": str(var_dir),
        "DATABASE_URL": f"sqlite:///{var_dir / 'gpu_advisor.sqlite3'}",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DEBUG": "0",
        "HTTPS": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
    }


def prepare_site(env: dict[str, str], password: str) -> None:
    """Migrate, load the bundled catalogue and create the user who uploads."""
    manage = [str(BIN / "python"), "manage.py"]
    for command in (["migrate", "--no-input", "--verbosity", "0"], ["load_catalog"]):
        subprocess.run([*manage, *command], cwd=ROOT, env=env, check=True)
    code = CREATE_USER.format(username=USERNAME, password=password)
    subprocess.run([*manage, "shell", "-c", code], cwd=ROOT, env=env, check=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(env: dict[str, str], port: int) -> subprocess.Popen:
    """gunicorn as `make run` starts it, answering /healthz before this returns."""
    command = [str(BIN / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{port}"]
    server = subprocess.Popen(
        [*command, "--workers", "2", "--timeout", "120"],
        cwd=ROOT,
        env=env,
    )
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
                return server
        except OSError:
            if server.poll() is not None:
                break
            time.sleep(0.5)
    server.terminate()
    raise SystemExit(f"gunicorn did not answer on port {port} within {SERVER_START_TIMEOUT_S} s")


def repository_archive(directory: Path) -> Path:
    """The code-scan sample repository as a .tar.gz, as the tests upload it."""
    archive = directory / "repo.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(CODE_REPO, arcname="repo")
    return archive


def save(page: Page, name: str) -> Path:
    path = IMAGES / name
    page.screenshot(path=str(path))
    size_bytes = path.stat().st_size
    print(f"{path.relative_to(ROOT)}: {size_bytes / 1024:.0f} KiB")
    if size_bytes > MAX_PNG_BYTES:
        raise SystemExit(f"{path.name} is {size_bytes} bytes, over {MAX_PNG_BYTES}")
    return path


def sign_in(page: Page, site: str, password: str) -> None:
    page.goto(f"{site}/account/login/")
    page.get_by_label("Username").fill(USERNAME)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()


def upload(page: Page, form_url: str, path: Path) -> None:
    """Upload one file through the page's form and land on the job's page."""
    page.goto(form_url)
    page.locator("input[type=file]").first.set_input_files(str(path))
    page.get_by_role("button", name=re.compile("^Upload")).click()
    expect(page).to_have_url(re.compile(r"/jobs/[0-9a-f-]{36}/$"), timeout=REPORT_TIMEOUT_MS)


def take_screenshots(site: str, password: str, work_dir: Path) -> list[Path]:
    """The sizing answer, the capacity plan, the trace report and the code-scan report, in
    that order."""
    IMAGES.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_context(viewport=VIEWPORT).new_page()

        page.goto(f"{site}/size/?{SIZING_QUERY}")
        expect(page.locator(".recommendation .headline")).to_be_visible()
        shots = [save(page, "sizing-answer.png")]

        page.goto(f"{site}/plan/?{PLAN_QUERY}#plan-title")
        expect(page.locator("#plan-headline")).to_be_visible()
        shots.append(save(page, "capacity-plan.png"))

        sign_in(page, site, password)
        upload(page, f"{site}/jobs/new/", TRACE)
        expect(page.get_by_role("heading", name="Where the GPU time went")).to_be_visible(
            timeout=REPORT_TIMEOUT_MS
        )
        shots.append(save(page, "trace-report.png"))

        upload(page, f"{site}/jobs/new/code/", repository_archive(work_dir))
        expect(page.locator("#scorecard")).to_be_visible(timeout=REPORT_TIMEOUT_MS)
        shots.append(save(page, "code-scan-report.png"))
        browser.close()
    return shots


def main() -> None:
    work_dir = Path(tempfile.mkdtemp(prefix="gpu-advisor-screenshots-"))
    password = secrets.token_urlsafe(16)
    server = None
    try:
        env = embedded_environment(work_dir)
        prepare_site(env, password)
        port = free_port()
        server = start_server(env, port)
        take_screenshots(f"http://127.0.0.1:{port}", password, work_dir)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        shutil.rmtree(work_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
