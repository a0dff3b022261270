"""Fetching a feed over HTTP with a timeout and a size cap; errors say whether to retry."""

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
    """GET `url`, streaming, and refuse bodies over `max_bytes` before reading them whole."""
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


def new_client(
    timeout_s: float = DEFAULT_TIMEOUT_S, transport: httpx.BaseTransport | None = None
) -> httpx.Client:
    return httpx.Client(
        timeout=httpx.Timeout(timeout_s),
        follow_redirects=True,
        headers={"User-Agent": "gpu-advisor price refresh"},
        transport=transport,
    )
