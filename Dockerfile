# The one image for web, worker and beat.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    VAR_DIR=/app/var

WORKDIR /app
# Dependencies first, from the hashed lock file, so a source change reuses this layer.
COPY requirements.lock ./
RUN pip install --require-hashes -r requirements.lock
COPY pyproject.toml ./
COPY config ./config
COPY accounts ./accounts
COPY catalog ./catalog
COPY advisor ./advisor
COPY jobs ./jobs
COPY templates ./templates
COPY static ./static
COPY manage.py gunicorn.conf.py ./
RUN pip install --no-deps . \
    && SECRET_KEY=build-only STATIC_MANIFEST=1 python manage.py collectstatic --no-input \
    && useradd --create-home --uid 1000 app \
    && mkdir -p /app/var/media \
    && chown -R app /app/var

USER app
EXPOSE 8000
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
