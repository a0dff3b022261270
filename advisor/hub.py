"""The Hugging Face Hub adapter: a model's config.json and weight index, read over the network.

Like catalog/feeds, this is the app's edge to an outside service. Every request goes to
settings.HF_ENDPOINT (passed explicitly: huggingface_hub reads its own HF_ENDPOINT once, at
import), bounded by HUB_TIMEOUT_S, each file by HUB_MAX_CONFIG_BYTES; what it read is kept in
the app's cache and in huggingface_hub's own cache under HF_HUB_CACHE_DIR (VAR_DIR/hf), which
also answers when the Hub cannot be reached. HF_TOKEN is sent to the endpoint only: it is not
logged, cached, or part of any answer.
"""

import contextlib
import hashlib
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
from catalog.domain.json_depth import JsonTooDeep, json_loads_limited

CONFIG_FILE = "config.json"
WEIGHT_INDEX_FILE = "model.safetensors.index.json"
DEFAULT_REVISION = "main"
LIBRARY_NAME = "gpu-advisor"


class HubError(Exception):
    """Why a Hub model could not be read; `code` names the case for the API."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


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
    """The model's config.json (and stored weight size) at the revision; HubError if not."""
    key = _cache_key(ref)
    cached = _cache_get(key)
    if cached is not None:
        return HubModel(**cached)
    config_path = _download(ref, CONFIG_FILE, required=True)
    config = _read_json(ref, config_path, CONFIG_FILE)
    if not isinstance(config, dict):
        raise HubError("invalid_config", f"{ref}: {CONFIG_FILE} is not a JSON object")
    index_path = _download(ref, WEIGHT_INDEX_FILE, required=False)
    model = HubModel(
        repo_id=ref.repo_id,
        requested_revision=ref.revision,
        # hf_hub_download keeps every file under snapshots/<commit>/.
        commit=config_path.parent.name,
        config=config,
        stored_weight_bytes=_total_size(ref, index_path) if index_path else None,
    )
    _cache_set(key, asdict(model))
    return model


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


def _download(ref: HubRef, filename: str, *, required: bool) -> Path | None:
    # The file download's read timeout is a library constant, read at each download.
    hub_constants.HF_HUB_DOWNLOAD_TIMEOUT = settings.HUB_TIMEOUT_S
    revision = ref.revision or DEFAULT_REVISION
    # False, not None: never a token from the environment or ~/.cache, only the setting.
    token = settings.HF_TOKEN or False
    options: dict[str, Any] = {
        "repo_id": ref.repo_id,
        "filename": filename,
        "revision": revision,
        "cache_dir": settings.HF_HUB_CACHE_DIR,
        "token": token,
        "library_name": LIBRARY_NAME,
    }
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
            return Path(hf_hub_download(**options, local_files_only=True))
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
        raise HubError(
            "offline",
            f"the Hub ({settings.HF_ENDPOINT}) did not answer within {settings.HUB_TIMEOUT_S:g} s "
            f"and {ref} is not in the local cache: try again, or use a bundled model or a "
            "config.json",
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
