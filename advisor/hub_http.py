"""The HTTP client huggingface_hub uses here: every socket operation of a Hub read shares one
deadline.

huggingface_hub gives each request its own timeout, and a timeout bounds one socket read, not a
request: a HEAD, a second HEAD and a download each waited HUB_TIMEOUT_S, and a server that
trickles a byte a second never times out at all. Here the network backend clamps each connect,
read and write to what is left of the deadline set by `hub_deadline`, and refuses once it has
passed, so a whole read of config.json and the weight index ends by the deadline.
"""

import contextlib
import time
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from typing import Any

import httpcore2
import httpx2
from huggingface_hub import set_client_factory
from huggingface_hub.utils._http import hf_request_event_hook

# time.monotonic() by which the Hub read in progress must end; None outside one.
_deadline_s: ContextVar[float | None] = ContextVar("hub_deadline_s", default=None)


@contextlib.contextmanager
def hub_deadline(seconds: float) -> Iterator[None]:
    """Every Hub request made inside shares `seconds`, counted from now."""
    token = _deadline_s.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline_s.reset(token)


def _clamp(timeout: float | None, timeout_error: type[Exception]) -> float | None:
    deadline = _deadline_s.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise timeout_error("the Hub read's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore2.NetworkStream):
    def __init__(self, stream: httpcore2.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _clamp(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _clamp(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> httpcore2.NetworkStream:
        clamped = _clamp(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, clamped))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    def __init__(self) -> None:
        self._backend = httpcore2.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        clamped = _clamp(timeout, httpcore2.ConnectTimeout)
        stream = self._backend.connect_tcp(host, port, clamped, local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:
        clamped = _clamp(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._backend.connect_unix_socket(path, clamped, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class _DeadlineTransport(httpx2.HTTPTransport):
    def __init__(self) -> None:
        super().__init__()
        # httpx2's transport takes no network backend; its pool is rebuilt with ours, with the
        # same TLS defaults (certifi, as httpx2's own transport uses).
        self._pool = httpcore2.ConnectionPool(
            ssl_context=httpx2.create_ssl_context(), network_backend=_DeadlineBackend()
        )


def _client() -> httpx2.Client:
    # huggingface_hub's default client (its request hook, redirects, no client-wide timeout),
    # over the deadline transport.
    return httpx2.Client(
        transport=_DeadlineTransport(),
        event_hooks={"request": [hf_request_event_hook]},
        follow_redirects=True,
        timeout=None,
    )


def hub_client_install() -> None:
    """Make huggingface_hub's shared session the deadline-bound one (once per process)."""
    set_client_factory(_client)
