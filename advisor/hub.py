"""The Hugging Face Hub adapter: a model's config.json and weight index, read over the network.

Like catalog/feeds, this is the app's edge to an outside service. Every request goes to
settings.HF_ENDPOINT (passed explicitly: huggingface_hub reads its own HF_ENDPOINT once, at
import). One read (every request for config.json and the weight index) ends within
HUB_TIMEOUT_S (hub_http.py), each file is capped at HUB_MAX_CONFIG_BYTES, and hub_guard.py keeps
a slow or failing Hub from holding the site's workers: failures are remembered, a breaker stops
asking a Hub that timed out, and one read runs at a time. What was read is kept in the app's
cache and in huggingface_hub's own cache under HF_HUB_CACHE_DIR (VAR_DIR/hf), which also
answers when the Hub cannot be reached. HF_TOKEN is sent to the endpoint only: it is not
logged, cached, or part of any answer.
"""

import contextlib
import contextvars
import hashlib
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx2
from django.conf import settings
from django.core.cache import cache
from huggingface_hub import constants as hub_constants
from huggingface_hub import get_hf_file_metadata, hf_hub_download, hf_hub_url
from huggingface_hub.errors import (
    DisabledRepoError,
    GatedRepoError,
    HfHubHTTPError,
    LocalEntryNotFoundError,
    OfflineModeIsEnabled,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from redis.exceptions import RedisError

from advisor.domain.sizing.hub_ids import HubRef
from advisor.hub_guard import (
    breaker_open,
    breaker_reason,
    failure_recall,
    failure_remember,
    read_slot_take,
)
from advisor.hub_http import hub_client_install, hub_deadline
from catalog.domain.json_depth import JsonTooDeep, json_loads_limited

CONFIG_FILE = "config.json"
WEIGHT_INDEX_FILE = "model.safetensors.index.json"
DEFAULT_REVISION = "main"
LIBRARY_NAME = "gpu-advisor"
# Codes of a Hub that failed us (remembered briefly, and the breaker opens) and of an answer
# about the id itself (remembered longer: it will not change in minutes).
UNREACHABLE = "offline"
TRANSIENT_CODES = frozenset({UNREACHABLE, "hub_error"})
# The reading thread may take this much past the deadline to notice it (a clamped socket
# call returning), before the request answers without it.
_JOIN_GRACE_S = 0.25

hub_client_install()


class HubError(Exception):
    """Why a Hub model could not be read; `code` names the case for the API."""

    def __init__(self, code: str, message: str, *, what_happened: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.what_happened = what_happened  # "did not answer within 10.0 s", for the breaker


@dataclass(frozen=True)
class HubModel:
    repo_id: str
    requested_revision: str | None
    commit: str  # the commit the files were read at
    config: dict[str, Any]
    stored_weight_bytes: int | None  # metadata.total_size of the safetensors index, if any

    def source(self) -> dict[str, Any]:
        return {
            "kind": "hub",
            "hf_id": self.repo_id,
            "revision": self.requested_revision or DEFAULT_REVISION,
            "commit": self.commit,
            "endpoint": settings.HF_ENDPOINT,
        }


def hub_model_read(*, ref: HubRef) -> HubModel:
    """The model's config.json (and stored weight size) at the revision; HubError if not.

    Answers from the cache, from a failure remembered for this id, or, while the breaker is
    open, from the disk cache or at once with a HubError; otherwise reads the Hub within
    HUB_TIMEOUT_S in all (the wait for a turn included)."""
    key = _cache_key(ref)
    cached = _cache_get(key)
    if cached is not None:
        return HubModel(**cached)
    where = f"{ref.repo_id}|{ref.revision or DEFAULT_REVISION}"
    remembered = failure_recall(where)
    if remembered is not None:
        age_s = max(0, round(time.time() - remembered.at_s))
        raise HubError(remembered.code, f"{remembered.message} (as answered {age_s} s ago)")
    is_open = breaker_reason()
    if is_open is not None:
        return _while_the_breaker_is_open(ref, key, *is_open)
    started_s = time.monotonic()
    give_back = read_slot_take(wait_s=min(settings.HUB_SLOT_WAIT_S, settings.HUB_TIMEOUT_S))
    if give_back is None:
        raise HubError(
            "busy",
            f"another request is reading the Hub ({settings.HF_ENDPOINT}): try again in a few "
            "seconds, or use a bundled model or a config.json",
        )
    left_s = settings.HUB_TIMEOUT_S - (time.monotonic() - started_s)
    try:
        model = _read_in_thread(ref, started_s=started_s, left_s=left_s, give_back=give_back)
    except HubError as error:
        _remember(where, error)
        raise
    _cache_set(key, asdict(model))
    return model


def _remember(where: str, error: HubError) -> None:
    if error.code == UNREACHABLE:
        breaker_open(error.what_happened)
    transient = error.code in TRANSIENT_CODES
    ttl_s = settings.HUB_FAILURE_TTL_S if transient else settings.HUB_NOT_FOUND_TTL_S
    failure_remember(where, code=error.code, message=str(error), ttl_s=ttl_s)


def _while_the_breaker_is_open(ref: HubRef, key: str, reason: str, left_s: float) -> HubModel:
    model = _read_from_disk(ref)
    if model is not None:
        _cache_set(key, asdict(model))
        return model
    raise HubError(
        "unavailable",
        f"the Hub ({settings.HF_ENDPOINT}) is unavailable (it {reason}); it is "
        f"not asked again for {max(1, round(left_s))} s and {ref} is not in the local cache: "
        "use a bundled model or a config.json, or try again later",
    )


def _read_in_thread(ref: HubRef, *, started_s: float, left_s: float, give_back) -> HubModel:
    """The read runs in a thread of its own, so that what no socket timeout bounds (a name
    lookup that hangs) cannot hold the request past the deadline; the thread gives the read
    slot back when it ends, so a read left behind still counts as the one running."""
    outcome: dict[str, Any] = {}

    def read() -> None:
        try:
            with hub_deadline(left_s):
                outcome["model"] = _read_from_hub(ref, started_s=started_s)
        except HubError as error:
            outcome["error"] = error
        except Exception as error:  # re-raised in the request's thread
            outcome["unexpected"] = error
        finally:
            give_back()

    thread = threading.Thread(target=contextvars.copy_context().run, args=(read,), daemon=True)
    thread.start()
    thread.join(max(0.0, left_s) + _JOIN_GRACE_S)
    if thread.is_alive():
        raise _unanswered(ref, time.monotonic() - started_s)
    if "unexpected" in outcome:
        raise outcome["unexpected"]
    if "error" in outcome:
        raise outcome["error"]
    return outcome["model"]


def _read_from_hub(ref: HubRef, *, started_s: float) -> HubModel:
    config_path = _download(ref, CONFIG_FILE, required=True, started_s=started_s)
    index_path = _download(ref, WEIGHT_INDEX_FILE, required=False, started_s=started_s)
    return _model(ref, config_path, index_path)


def _read_from_disk(ref: HubRef) -> HubModel | None:
    """What huggingface_hub cached on disk before, without a request; None if nothing."""
    try:
        config_path = _local(ref, CONFIG_FILE)
    except (LocalEntryNotFoundError, OfflineModeIsEnabled):
        return None
    try:
        index_path = _local(ref, WEIGHT_INDEX_FILE)
    except (LocalEntryNotFoundError, OfflineModeIsEnabled):
        index_path = None
    return _model(ref, config_path, index_path)


def _model(ref: HubRef, config_path: Path, index_path: Path | None) -> HubModel:
    config = _read_json(ref, config_path, CONFIG_FILE)
    if not isinstance(config, dict):
        raise HubError("invalid_config", f"{ref}: {CONFIG_FILE} is not a JSON object")
    return HubModel(
        repo_id=ref.repo_id,
        requested_revision=ref.revision,
        # hf_hub_download keeps every file under snapshots/<commit>/.
        commit=config_path.parent.name,
        config=config,
        stored_weight_bytes=_total_size(ref, index_path) if index_path else None,
    )


def _cache_key(ref: HubRef) -> str:
    where = f"{settings.HF_ENDPOINT}|{ref.repo_id}|{ref.revision or DEFAULT_REVISION}"
    return "hub-model:" + hashlib.sha256(where.encode()).hexdigest()


def _cache_get(key: str) -> dict | None:
    try:
        return cache.get(key)
    except RedisError:  # a cache that is down costs a Hub request, not the answer
        return None


def _cache_set(key: str, value: dict) -> None:
    with contextlib.suppress(RedisError):
        cache.set(key, value, settings.HUB_CACHE_TTL_S)


def _options(ref: HubRef, filename: str) -> dict[str, Any]:
    return {
        "repo_id": ref.repo_id,
        "filename": filename,
        "revision": ref.revision or DEFAULT_REVISION,
        "cache_dir": settings.HF_HUB_CACHE_DIR,
        # False, not None: never a token from the environment or ~/.cache, only the setting.
        "token": settings.HF_TOKEN or False,
        "library_name": LIBRARY_NAME,
    }


def _local(ref: HubRef, filename: str) -> Path:
    return Path(hf_hub_download(**_options(ref, filename), local_files_only=True))


def _download(ref: HubRef, filename: str, *, required: bool, started_s: float) -> Path | None:
    # The file download's read timeout is a library constant, read at each download; the
    # deadline (hub_http.py) clamps every socket call below it.
    hub_constants.HF_HUB_DOWNLOAD_TIMEOUT = settings.HUB_TIMEOUT_S
    options = _options(ref, filename)
    revision, token = options["revision"], options["token"]
    url = hf_hub_url(ref.repo_id, filename, revision=revision, endpoint=settings.HF_ENDPOINT)
    try:
        try:
            # One HEAD, not retried: hf_hub_download alone retries an unreachable Hub with
            # backoff for minutes, where the answer must come within HUB_TIMEOUT_S.
            metadata = get_hf_file_metadata(
                url,
                token=token,
                timeout=settings.HUB_TIMEOUT_S,
                library_name=LIBRARY_NAME,
                endpoint=settings.HF_ENDPOINT,
            )
        except httpx2.TransportError:
            # Unreachable: what huggingface_hub cached before still answers.
            return _local(ref, filename)
        if metadata.size is not None and metadata.size > settings.HUB_MAX_CONFIG_BYTES:
            raise HubError(
                "too_large",
                f"{ref}: {filename} is {metadata.size:,} bytes, more than the "
                f"{settings.HUB_MAX_CONFIG_BYTES:,} read from the Hub (HUB_MAX_CONFIG_BYTES)",
            )
        path = Path(
            hf_hub_download(
                **options, endpoint=settings.HF_ENDPOINT, etag_timeout=settings.HUB_TIMEOUT_S
            )
        )
    except GatedRepoError as error:
        if settings.HF_TOKEN:
            message = (
                f"{ref.repo_id} is gated and HF_TOKEN has no access: accept its terms on the Hub "
                "with the token's account"
            )
        else:
            message = (
                f"{ref.repo_id} is gated: it needs HF_TOKEN, of an account that accepted its "
                "terms on the Hub"
            )
        raise HubError("gated", message) from error
    except DisabledRepoError as error:
        raise HubError("disabled", f"{ref.repo_id} is disabled on the Hub") from error
    except RepositoryNotFoundError as error:
        raise _not_found(ref, error) from error
    except RevisionNotFoundError as error:
        raise HubError(
            "unknown_revision", f"{ref.repo_id} has no revision {ref.revision!r}"
        ) from error
    except RemoteEntryNotFoundError as error:
        if not required:
            return None
        raise HubError("no_config", f"{ref} has no {filename}: not a transformers model") from error
    except (LocalEntryNotFoundError, OfflineModeIsEnabled, httpx2.TransportError) as error:
        if not required:
            return None
        if _timed_out(error):
            raise _unanswered(ref, time.monotonic() - started_s) from error
        what_happened = f"could not be reached ({_transport_cause(error)})"
        raise HubError(
            UNREACHABLE,
            f"the Hub ({settings.HF_ENDPOINT}) {what_happened} and {ref} is not in the local "
            "cache: try again later, or use a bundled model or a config.json",
            what_happened=what_happened,
        ) from error
    except HfHubHTTPError as error:
        status = error.response.status_code if error.response is not None else "no"
        raise HubError(
            "hub_error", f"the Hub answered {status} for {ref}: try again later"
        ) from error
    if path.stat().st_size > settings.HUB_MAX_CONFIG_BYTES:
        raise HubError(
            "too_large",
            f"{ref}: {filename} is more than the {settings.HUB_MAX_CONFIG_BYTES:,} bytes read "
            "from the Hub (HUB_MAX_CONFIG_BYTES)",
        )
    return path


def _unanswered(ref: HubRef, waited_s: float) -> HubError:
    what_happened = f"did not answer within {waited_s:.1f} s"
    return HubError(
        UNREACHABLE,
        f"the Hub ({settings.HF_ENDPOINT}) {what_happened} and {ref} is not in the local cache: "
        "try again later, or use a bundled model or a config.json",
        what_happened=what_happened,
    )


def _causes(error: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    while error is not None and error not in chain:
        chain.append(error)
        error = error.__cause__ or error.__context__
    return chain


def _timed_out(error: BaseException) -> bool:
    """Whether a timeout (not a refusal or a failed name lookup) is behind the error."""
    return any(isinstance(cause, httpx2.TimeoutException) for cause in _causes(error))


def _transport_cause(error: BaseException) -> str:
    transport = next(
        (cause for cause in _causes(error) if isinstance(cause, httpx2.TransportError)), None
    )
    if transport is None:
        return "no connection"
    return str(transport) or type(transport).__name__


def _not_found(ref: HubRef, error: RepositoryNotFoundError) -> HubError:
    status = error.response.status_code if error.response is not None else None
    if status == 401 and not settings.HF_TOKEN:
        # The Hub answers a private repository and a missing one alike to an anonymous caller.
        return HubError(
            "not_found_or_private",
            f"{ref.repo_id} is not on the Hub, or is private: a private model needs HF_TOKEN "
            "of an account that can read it",
        )
    return HubError(
        "not_found",
        f"{ref.repo_id} is not on the Hub (or is private to an account other than HF_TOKEN's)",
    )


def _read_json(ref: HubRef, path: Path, filename: str) -> Any:
    try:
        return json_loads_limited(path.read_text(encoding="utf-8-sig"))
    except (JsonTooDeep, ValueError, UnicodeDecodeError) as error:
        # json.JSONDecodeError is a ValueError.
        raise HubError("invalid_config", f"{ref}: {filename} is not valid JSON") from error


def _total_size(ref: HubRef, path: Path) -> int | None:
    index = _read_json(ref, path, WEIGHT_INDEX_FILE)
    metadata = index.get("metadata") if isinstance(index, dict) else None
    total = metadata.get("total_size") if isinstance(metadata, dict) else None
    if isinstance(total, bool) or not isinstance(total, int) or total <= 0:
        return None
    return total
