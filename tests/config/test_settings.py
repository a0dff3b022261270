"""Settings come from the environment; unsafe combinations refuse to start."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRINT_SETTINGS = (
    "import django, json; django.setup(); from django.conf import settings as s; "
    "print(json.dumps({'engine': s.DATABASES['default']['ENGINE'], 'debug': s.DEBUG, "
    "'eager': s.CELERY_TASK_ALWAYS_EAGER}))"
)


def run_with_env(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SECRET_KEY", "DEBUG", "DATABASE_URL", "CELERY_BROKER_URL"}
    }
    return subprocess.run(
        [sys.executable, "-c", PRINT_SETTINGS],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "config.settings", "VAR_DIR": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_missing_secret_key_with_debug_off_refuses_to_start(tmp_path):
    result = run_with_env(tmp_path)
    assert result.returncode != 0
    assert "SECRET_KEY is not set and DEBUG is off" in result.stderr


def test_defaults_are_sqlite_in_process_tasks_and_debug_off(tmp_path):
    result = run_with_env(tmp_path, SECRET_KEY="k" * 50)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "engine": "django.db.backends.sqlite3",
        "debug": False,
        "eager": True,
    }


def test_database_and_broker_urls_switch_to_postgresql_and_a_real_broker(tmp_path):
    result = run_with_env(
        tmp_path,
        SECRET_KEY="k" * 50,
        DATABASE_URL="postgres://user@db.example:5432/gpu_advisor",
        CELERY_BROKER_URL="redis://redis.example:6379/0",
    )
    assert result.returncode == 0, result.stderr
    settings = json.loads(result.stdout)
    assert settings["engine"] == "django.db.backends.postgresql"
    assert settings["eager"] is False


def test_debug_on_without_a_secret_key_starts_for_local_development(tmp_path):
    result = run_with_env(tmp_path, DEBUG="1")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["debug"] is True
