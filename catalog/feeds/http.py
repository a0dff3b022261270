"""Fetching a feed over HTTP, or from a local `file://` mirror, with a size cap; errors say
whether to retry. httpx has no file transport, so `file://` URLs are read here, capped the same."""

from pathlib import Path
from urllib.parse import unquote, urlsplit

import httpx


class FeedError(Exception):
    """The feed could not be read; nothing is written. The message says why."""


class TransientFeedError(FeedError):
    """Worth retrying later: a timeout, a dropped connection, a 5xx or a 429."""


DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_BYTES = 20 * 1024 * 1024


def fetch_bytes(
    client: httpx.Client,
    url: str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    params: dict | None = None,
) -> bytes:
    """GET `url`, streaming, and refuse bodies over `max_bytes` before reading them whole.

    A `file://` URL (a local mirror) is read from disk under the same cap; `params` do not apply.
    """
    if url.startswith("file:"):
        return _read_file_url(url, max_bytes=max_bytes)
    try:
        with client.stream("GET", url, params=params) as response:
            if response.status_code == 429 or response.status_code >= 500:
                raise TransientFeedError(f"{url} answered HTTP {response.status_code}")
            if response.status_code >= 400:
                raise FeedError(f"{url} answered HTTP {response.status_code}")
            declared = response.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise FeedError(
                    f"{url} is {int(declared):,} bytes, over the {max_bytes:,}-byte cap"
                )
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise FeedError(f"{url} is over the {max_bytes:,}-byte cap")
                chunks.append(chunk)
            return b"".join(chunks)
    except httpx.TimeoutException as error:
        raise TransientFeedError(f"{url} timed out ({error.__class__.__name__})") from error
    except httpx.TransportError as error:
        raise TransientFeedError(f"{url} could not be reached: {error}") from error


def _read_file_url(url: str, *, max_bytes: int) -> bytes:
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise FeedError(f"{url}: a file:// URL must name a local path (no host)")
    path = Path(unquote(parts.path))
    try:
        with path.open("rb") as body:
            size = path.stat().st_size
            if size > max_bytes:
                raise FeedError(f"{url} is {size:,} bytes, over the {max_bytes:,}-byte cap")
            # Read one byte past the cap: a file that grew after the stat is still refused.
            data = body.read(max_bytes + 1)
    except IsADirectoryError as error:
        raise FeedError(f"{url} is a directory, not a file") from error
    except FileNotFoundError as error:
        raise FeedError(f"{url} does not exist") from error
    except OSError as error:
        raise FeedError(f"{url} could not be read: {error.strerror or error}") from error
    if len(data) > max_bytes:
        raise FeedError(f"{url} is over the {max_bytes:,}-byte cap")
    return data


def new_client(
    timeout_s: float = DEFAULT_TIMEOUT_S, transport: httpx.BaseTransport | None = None
) -> httpx.Client:
    return httpx.Client(
        timeout=httpx.Timeout(timeout_s),
        follow_redirects=True,
        headers={"User-Agent": "gpu-advisor price refresh"},
        transport=transport,
    )
