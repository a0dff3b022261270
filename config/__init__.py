"""The project: settings (every knob from the environment), URLs, the Celery app, WSGI, the
health and readiness probes, the API's parsers, schema hooks and error views. May import every
app; no app imports config except through Django's settings."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
