"""Production settings pass Django's deployment checklist with nothing to report."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_check_deploy_reports_nothing_with_debug_off(tmp_path):
    env = {
        key: value
        for key, value in os.environ.items()
        # The browser tests' DJANGO_ALLOW_ASYNC_UNSAFE is exactly what --deploy rightly flags.
        if key not in {"DEBUG", "HTTPS", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE"}
        and not key.startswith("SECURE_")
    }
    env.update(
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="advisor.example.com",
        VAR_DIR=str(tmp_path),
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "DEBUG"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout
