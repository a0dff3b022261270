"""Times the same requests in whichever checkout it is run from (its working directory): the
child process of bench/versus_revision.py. Prints one JSON line: seconds per request, by
endpoint. Standalone, so that an earlier revision's tree runs it unchanged."""

import json
import os
import sys
import time

SIZING_BODY = {
    "model": "llama-3.1-70b",
    "task": "inference",
    "context_tokens": 8192,
    "concurrent_users": 16,
}
WARMUP = 5


def main() -> None:
    runs = int(sys.argv[1])
    # The checkout being timed comes first (not this script's own tree).
    sys.path.insert(0, os.getcwd())
    import django

    django.setup()
    from django.test import Client

    client = Client()
    body = json.dumps(SIZING_BODY)
    requests = {
        "POST /api/v1/advice/sizing": lambda: client.post(
            "/api/v1/advice/sizing", body, content_type="application/json"
        ),
        "GET /api/v1/gpus/": lambda: client.get("/api/v1/gpus/"),
        "GET /": lambda: client.get("/"),
        "GET /api/v1/gpus/H100-SXM/": lambda: client.get("/api/v1/gpus/H100-SXM/"),
    }
    seconds: dict[str, list[float]] = {}
    for name, send in requests.items():
        for _ in range(WARMUP):
            status = send().status_code
            if status != 200:
                raise SystemExit(f"{name}: HTTP {status}")
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            send()
            times.append(time.perf_counter() - started)
        seconds[name] = times
    print(json.dumps(seconds))


if __name__ == "__main__":
    main()
