"""One settings module; every knob comes from the environment (see README, "Configuration").

The defaults are the embedded mode: SQLite, tasks run in-process, DEBUG off.
"""

from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
if (BASE_DIR / ".env").is_file():
    env.read_env(BASE_DIR / ".env")

DEBUG = env.bool("DEBUG", default=False)

SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set and DEBUG is off. Set SECRET_KEY to a long random string "
            "(python -c 'import secrets; print(secrets.token_urlsafe(50))'), "
            "or set DEBUG=1 for local development."
        )
    SECRET_KEY = "insecure-development-key-only-used-with-debug-on"

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "django_htmx",
    "knox",
    "axes",
    "csp",
    "accounts",
    "catalog",
    "advisor",
    "jobs",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "jobs.middleware.UploadSizeLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its lockout response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.teams",
            ],
        },
    },
]

# Runtime files (SQLite database, uploads) live under VAR_DIR, outside the source tree's
# tracked files.
VAR_DIR = Path(env.str("VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'gpu_advisor.sqlite3'}"),
}
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # A database host that does not answer costs a request this long, not libpq's default of
    # waiting forever; the request then gets a 503 with Retry-After (config/errors.py).
    DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = env.int(
        "DB_CONNECT_TIMEOUT_S", default=3
    )
DATABASE_RETRY_AFTER_S = env.int("DATABASE_RETRY_AFTER_S", default=10)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    # First, so that a locked-out username/address is refused before the password is checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "accounts:tokens"
LOGOUT_REDIRECT_URL = "catalog:gpu-list"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(VAR_DIR / "static")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STATICFILES_DIRS = [BASE_DIR / "static"]
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(VAR_DIR / "media")))
MEDIA_URL = "media/"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if env.bool("STATIC_MANIFEST", default=False)
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
# Serve static files straight from the finders when no collectstatic has run (embedded mode).
WHITENOISE_USE_FINDERS = env.bool("WHITENOISE_USE_FINDERS", default=True)

CACHES = {"default": env.cache_url("CACHE_URL", default="locmemcache://")}
if CACHES["default"]["BACKEND"].endswith("RedisCache"):
    # A Redis that is down or hung must cost a request a fraction of a second, not redis-py's
    # default of waiting forever; the callers fail open (accounts/throttling.py).
    CACHES["default"].setdefault("OPTIONS", {}).update(
        {
            "socket_connect_timeout": env.float("CACHE_CONNECT_TIMEOUT_S", default=0.25),
            "socket_timeout": env.float("CACHE_TIMEOUT_S", default=0.5),
        }
    )
# Once the cache failed, each process skips it for this long instead of paying the timeout on
# every request.
CACHE_RETRY_AFTER_S = env.float("CACHE_RETRY_AFTER_S", default=5.0)

# Hugging Face Hub: a sizing request may name a Hub model (`owner/name[@revision]`); its
# config.json and weight index are read from HF_ENDPOINT, with HF_TOKEN for gated or private
# models (sent only to HF_ENDPOINT, never logged or stored). One read (every request of it)
# ends within HUB_TIMEOUT_S, each file is capped at HUB_MAX_CONFIG_BYTES, and what was read is
# kept in the cache and under VAR_DIR/hf for HUB_CACHE_TTL_S.
HF_ENDPOINT = env.str("HF_ENDPOINT", default="https://huggingface.co").rstrip("/")
HF_TOKEN = env.str("HF_TOKEN", default="") or None
HF_HUB_CACHE_DIR = Path(env.str("HF_HUB_CACHE", default=str(VAR_DIR / "hf")))
HUB_TIMEOUT_S = env.float("HUB_TIMEOUT_S", default=10.0)
HUB_MAX_CONFIG_BYTES = env.int("HUB_MAX_CONFIG_BYTES", default=1024 * 1024)
HUB_CACHE_TTL_S = env.int("HUB_CACHE_TTL_S", default=24 * 3600)
# A slow Hub must not hold the site's workers (advisor/hub_guard.py): a failed read is
# remembered (a timeout or a 5xx briefly, an unknown id, revision or file longer), a timeout or
# refused connection stops Hub reads for HUB_BREAKER_S, and HUB_CONCURRENT_READS reads run at
# a time across the processes sharing the cache, each other request waiting HUB_SLOT_WAIT_S.
HUB_FAILURE_TTL_S = env.int("HUB_FAILURE_TTL_S", default=120)
HUB_NOT_FOUND_TTL_S = env.int("HUB_NOT_FOUND_TTL_S", default=600)
HUB_BREAKER_S = env.int("HUB_BREAKER_S", default=60)
HUB_CONCURRENT_READS = env.int("HUB_CONCURRENT_READS", default=1)
HUB_SLOT_WAIT_S = env.float("HUB_SLOT_WAIT_S", default=0.2)

REST_FRAMEWORK = {
    # drf-spectacular's, plus each operation's error responses (config/schema.py).
    "DEFAULT_SCHEMA_CLASS": "config.schema.AutoSchema",
    # Filtering and ordering both come from the app's FilterSets, shared with the HTML pages.
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "COERCE_DECIMAL_TO_STRING": False,
    # DRF's two, with JSON written by msgspec (config/renderers.py).
    "DEFAULT_RENDERER_CLASSES": [
        "config.renderers.FastJSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    # DRF's own three, with JSON bodies held to the one nesting limit (catalog/domain/json_depth).
    "DEFAULT_PARSER_CLASSES": [
        "config.parsers.DepthLimitedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": env.int("API_PAGE_SIZE", default=50),
    # Tools send `Authorization: Token ...` (no CSRF needed); the browser uses its session,
    # and DRF's SessionAuthentication enforces CSRF on unsafe methods.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticatedOrReadOnly",
    ],
    "DEFAULT_THROTTLE_CLASSES": [
        "accounts.throttling.AnonymousThrottle",
        "accounts.throttling.PerUserThrottle",
        "accounts.throttling.PerTeamThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("THROTTLE_ANON", default="120/min"),
        "user": env.str("THROTTLE_USER", default="600/min"),
        "team": env.str("THROTTLE_TEAM", default="1200/min"),
        "token_create": env.str("THROTTLE_TOKEN_CREATE", default="30/hour"),
    },
}

# API tokens: django-rest-knox stores only a SHA-512 digest; our model adds team and last use.
KNOX_TOKEN_MODEL = "accounts.ApiToken"
# knox's own migrations create its default token table, which our swapped model replaces; an
# unused table with a foreign key to users would only get in the way (flushes, deletes).
MIGRATION_MODULES = {"knox": None}
REST_KNOX = {
    "TOKEN_MODEL": "accounts.ApiToken",
    "TOKEN_TTL": None,  # each token carries the expiry its creator chose
    "TOKEN_PREFIX": "gpua_",
    "AUTH_HEADER_PREFIX": "Token",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "GPU Advisor API",
    "DESCRIPTION": (
        "GPU catalogue (datasheet specs), cloud offers and prices. Memory is in GiB (2^30 bytes), "
        "bandwidth in decimal GB/s, prices in USD per hour. [Back to GPU Advisor](/)"
    ),
    "TAGS": [
        {"name": "catalogue", "description": "GPUs, providers, offers and their prices"},
        {"name": "advice", "description": "Sizing, right-sizing and portability answers"},
        {"name": "jobs", "description": "Trace analyses and code scans (a team's token)"},
        {"name": "accounts", "description": "API tokens and team memberships"},
    ],
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI and Redoc come from the sidecar package: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # A required text field must not be empty: say so (minLength 1), as DRF enforces it.
    "ENFORCE_NON_BLANK_FIELDS": True,
    # Sizing and capacity requests share their pricing choices; offers have their own.
    "ENUM_NAME_OVERRIDES": {"PricingModelEnum": "advisor.api.serializers.PRICING_MODEL_CHOICES"},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "config.schema.postprocess_form_bodies",
    ],
}

# Celery: with no broker configured, tasks run in-process (embedded mode).
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env.str("CELERY_RESULT_BACKEND", default="") or None
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TIMEZONE = TIME_ZONE
# No lost work: a task is acknowledged only once it finished, a worker that dies puts its task
# back, each worker process takes one task at a time. Redis hands an unacknowledged task to
# another worker after the visibility timeout, which must outlast the hard time limit.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env.int("JOB_SOFT_TIME_LIMIT_S", default=540)
CELERY_TASK_TIME_LIMIT = env.int("JOB_HARD_TIME_LIMIT_S", default=600)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int(
        "CELERY_VISIBILITY_TIMEOUT_S", default=CELERY_TASK_TIME_LIMIT + 300
    ),
    "socket_connect_timeout": env.float("CELERY_BROKER_CONNECT_TIMEOUT_S", default=1.0),
    "socket_timeout": env.float("CELERY_BROKER_SOCKET_TIMEOUT_S", default=2.0),
}
# Publishing from a web request gives up quickly when the broker is down or hung: the job is
# already committed and the reaper sends it once the broker is back. No publish retries: a
# retry after a timeout waits again (two retries made an upload wait 8 s for a frozen broker),
# so an upload waits at most one connect timeout plus one socket timeout; a connection the
# broker closed (a restart) is replaced by kombu's pool without one. (Retries stay on with
# none allowed: kombu's retry path connects within its timeout, the plain path waits longer.)
CELERY_BROKER_CONNECTION_TIMEOUT = env.float("CELERY_BROKER_CONNECT_TIMEOUT_S", default=1.0)
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 0,
    "interval_start": 0,
    "interval_step": 0,
    "interval_max": 0,
}
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_QUEUE", default="celery")

# Security. HTTPS defaults to on whenever DEBUG is off; `make run` (plain http on localhost)
# turns it off explicitly.
HTTPS = env.bool("HTTPS", default=not DEBUG)
SECURE_SSL_REDIRECT = HTTPS
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]  # load-balancer probes speak plain http
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
if env.bool("BEHIND_PROXY", default=False):
    # Only behind a proxy that sets this header itself; otherwise clients could forge it.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"

# Content Security Policy (django-csp): our pages load scripts and styles only from our origin
# and use no inline scripts.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# Login attempts (web and admin) are limited per username and address by django-axes.
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = env.float("AXES_COOLOFF_HOURS", default=1.0)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False

# Price refreshes (catalog/feeds): where each source lives, and the limits a feed must respect.
GPUHUNT_CATALOG_URL = env.str(
    "GPUHUNT_CATALOG_URL", default="https://dstack-gpu-pricing.s3.eu-west-1.amazonaws.com/v3"
)
AZURE_PRICES_URL = env.str("AZURE_PRICES_URL", default="https://prices.azure.com/api/retail/prices")
SKYPILOT_CATALOG_URL = env.str(
    "SKYPILOT_CATALOG_URL",
    default="https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs",
)
PRICE_FEED_TIMEOUT_S = env.float("PRICE_FEED_TIMEOUT_S", default=30.0)
PRICE_FEED_MAX_BYTES = env.int("PRICE_FEED_MAX_BYTES", default=20 * 1024 * 1024)

# Jobs (uploads analysed by workers).
JOB_UPLOAD_MAX_BYTES = env.int("JOB_UPLOAD_MAX_BYTES", default=512 * 1024 * 1024)
JOB_MAX_DECOMPRESSED_BYTES = env.int("JOB_MAX_DECOMPRESSED_BYTES", default=2 * 1024**3)
JOB_ANALYSIS_MEMORY_BYTES = env.int("JOB_ANALYSIS_MEMORY_BYTES", default=3 * 1024**3)
JOB_MAX_ATTEMPTS = env.int("JOB_MAX_ATTEMPTS", default=2)
# A running job whose worker has not reported for this long is considered abandoned.
JOB_HEARTBEAT_TIMEOUT_S = env.int("JOB_HEARTBEAT_TIMEOUT_S", default=60)
# A queued job whose message the broker never accepted is sent by the reaper (every minute)
# once it is this old: longer than an after-commit publish can take before it gives up.
JOB_DISPATCH_GRACE_S = env.int("JOB_DISPATCH_GRACE_S", default=10)
# An Idempotency-Key on POST /api/v1/jobs/ names the same job for this long.
JOB_IDEMPOTENCY_KEY_TTL_S = env.int("JOB_IDEMPOTENCY_KEY_TTL_S", default=24 * 3600)
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# /readyz gives each of its checks (database, cache, broker) this long to answer.
READYZ_TIMEOUT_S = env.float("READYZ_TIMEOUT_S", default=1.0)
# ...and reuses its answer for this long, in each process.
READYZ_CACHE_S = env.float("READYZ_CACHE_S", default=2.0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}
