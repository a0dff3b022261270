"""The project: settings (every knob from the environment), URLs, the Celery app, WSGI, the
health and readiness probes, and the API's shared plumbing (parsers, fields, schema hooks, error
views). May import every app; apps import config only for that plumbing (api_fields), never
its settings module directly."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
