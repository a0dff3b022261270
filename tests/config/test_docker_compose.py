"""docker-compose.yml, read as Compose reads it (no Docker engine runs on these machines)."""

import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def services() -> dict:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return compose["services"]


def command_text(service: dict) -> str:
    command = service["command"]
    return command if isinstance(command, str) else " ".join(command)


def test_the_stack_has_exactly_the_five_services(services):
    assert set(services) == {"db", "redis", "web", "worker", "beat"}


def test_every_service_has_a_healthcheck(services):
    for name, service in services.items():
        assert service.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"


@pytest.mark.parametrize("name", ["web", "worker", "beat"])
def test_app_services_wait_for_healthy_database_and_redis(services, name):
    depends_on = services[name]["depends_on"]
    assert depends_on["db"] == {"condition": "service_healthy"}
    assert depends_on["redis"] == {"condition": "service_healthy"}


@pytest.mark.parametrize("name", ["worker", "beat"])
def test_worker_and_beat_start_after_web_has_migrated(services, name):
    assert services[name]["depends_on"]["web"] == {"condition": "service_healthy"}


def test_commands_run_gunicorn_a_celery_worker_and_the_database_beat(services):
    assert "gunicorn config.wsgi:application" in command_text(services["web"])
    assert "manage.py migrate" in command_text(services["web"])
    assert command_text(services["worker"]).startswith("celery -A config worker")
    beat = command_text(services["beat"])
    assert "celery -A config beat" in beat
    assert "django_celery_beat.schedulers:DatabaseScheduler" in beat
    assert services["beat"]["deploy"]["replicas"] == 1


@pytest.mark.parametrize("name", ["web", "worker", "beat"])
def test_app_services_point_at_the_compose_database_and_broker(services, name):
    env = services[name]["environment"]
    assert env["DATABASE_URL"].startswith("postgres://") and "@db:5432/" in env["DATABASE_URL"]
    assert env["CELERY_BROKER_URL"] == "redis://redis:6379/0"
    assert env["DEBUG"] == "0"
    assert env["SECRET_KEY"].startswith("${SECRET_KEY:?")


def test_web_and_worker_share_the_upload_volume(services):
    assert "uploads:/app/var/media" in services["web"]["volumes"]
    assert "uploads:/app/var/media" in services["worker"]["volumes"]


def test_redis_keeps_an_append_only_file(services):
    assert "--appendonly" in services["redis"]["command"]
    assert (
        services["redis"]["command"][services["redis"]["command"].index("--appendonly") + 1]
        == "yes"
    )


def test_the_image_installs_the_project_and_collects_static_files():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert dockerfile.startswith("# The one image") and "FROM python:3.11" in dockerfile
    assert "pip install --no-deps ." in dockerfile and "collectstatic" in dockerfile
    for path in ("templates", "static", "manage.py"):
        assert f"COPY {path} " in dockerfile, path


def test_the_image_copies_every_package_the_project_installs():
    """The image once left out advisor/ and jobs/: every package pyproject.toml installs is
    copied, so the image can import what the app imports."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = project["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = [pattern.removesuffix("*") for pattern in patterns]
    assert {"config", "catalog", "accounts", "advisor", "jobs"} <= set(packages)
    for package in packages:
        assert f"COPY {package} ./{package}" in dockerfile, package


def _locked_names(lock_file: str) -> set[str]:
    lock = (ROOT / lock_file).read_text()
    pins = [line for line in lock.splitlines() if "==" in line and not line.startswith("#")]
    assert pins and all(line.endswith("\\") for line in pins), "every pin carries hashes"
    return {line.split("==")[0].lower().replace("_", "-") for line in pins}


def _names(requirements: list[str]) -> set[str]:
    return {
        line.split("==")[0].split("[")[0].strip().lower().replace("_", "-") for line in requirements
    }


def test_the_image_installs_dependencies_from_the_hashed_lock_file():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "pip install --require-hashes -r requirements.lock" in dockerfile


def test_the_lock_files_hold_every_direct_pin():
    """A pin added to pyproject.toml without `make lock` would install nowhere."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = _names(project["dependencies"])
    dev = _names(project["optional-dependencies"]["dev"])
    assert runtime <= _locked_names("requirements.lock")
    assert runtime | dev <= _locked_names("requirements-dev.lock")
