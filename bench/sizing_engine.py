"""The sizing engine timed in-process, on the benchmark's throwaway database."""

import os
import statistics
import sys
import time
from collections.abc import Callable

from latency import percentile
from machine import ROOT
from sizing_requests import ENGINE_WORKLOADS, SIZING_BODY

ENGINE_GOAL_MS = 50.0


def timed(function: Callable[[], object], runs: int) -> dict:
    durations = []
    for _ in range(runs):
        started = time.perf_counter()
        function()
        durations.append(time.perf_counter() - started)
    return {
        "runs": runs,
        "median_ms": round(statistics.median(durations) * 1000, 3),
        "p95_ms": round(percentile(durations, 95) * 1000, 3),
        "min_ms": round(min(durations) * 1000, 3),
        "max_ms": round(max(durations) * 1000, 3),
    }


def engine_benchmark(env: dict[str, str], runs: int) -> dict:
    for key in ("DATABASE_URL", "VAR_DIR", "SECRET_KEY", "HTTPS", "DJANGO_SETTINGS_MODULE"):
        os.environ[key] = env[key]
    os.environ["DEBUG"] = "1"
    os.environ.pop("CACHE_URL", None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    # Imports that need Django set up first.
    from django.db import connection, reset_queries
    from rest_framework.renderers import JSONRenderer
    from rest_framework.settings import api_settings

    from advisor.api.serializers import SizingRequestSerializer
    from advisor.domain.sizing.recommend import rank_candidates, recommend
    from advisor.domain.sizing.report import sizing_report
    from advisor.selectors import catalogue_snapshot_get, device_list, device_offers_list

    devices = device_list()
    offers = device_offers_list(pricing_model="on_demand")
    reset_queries()
    device_list(), device_offers_list(pricing_model="on_demand")
    catalogue_queries = len(connection.queries)  # DEBUG=1 records them
    offer_count = sum(len(rows) for rows in offers.values())

    def validated(body: dict):
        serializer = SizingRequestSerializer(data=body)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data["workload"]

    workloads = {}
    for name, body in ENGINE_WORKLOADS.items():
        workload = validated(body)
        result = recommend(workload, devices, offers)
        ranked = timed(lambda w=workload: rank_candidates(w, devices, offers), runs)
        full = timed(lambda w=workload: recommend(w, devices, offers), runs)
        workloads[name] = {
            "request_body": body,
            "candidates": len(result.candidates),
            "fitting": len(result.fitting),
            "remedies_sized": len(result.remedies),
            "recommend": full,
            "rank_candidates_only": ranked,
            "meets_goal": full["p95_ms"] < ENGINE_GOAL_MS,
        }

    # What else one sizing request does besides the engine (the API's request path).
    api_workload = validated(SIZING_BODY)
    api_result = recommend(api_workload, devices, offers)
    report = sizing_report(api_result)
    breakdown = {
        "validate_request (serializer, model config parse)": timed(
            lambda: validated(SIZING_BODY), runs
        ),
        "catalogue_snapshot_get (version query; this process's copy reused)": timed(
            lambda: catalogue_snapshot_get(pricing_model="on_demand"), runs
        ),
        "recommend": timed(lambda: recommend(api_workload, devices, offers), runs),
        "sizing_report (dict of the answer)": timed(lambda: sizing_report(api_result), runs),
        "render_json (the API's renderer, msgspec)": timed(
            lambda: api_settings.DEFAULT_RENDERER_CLASSES[0]().render(report), runs
        ),
    }
    # The renderer the API used before config/renderers.py, on the same answer.
    drf_render = timed(lambda: JSONRenderer().render(report), runs)
    # Paid once per process, and again after each catalogue write: not per request.
    reload = timed(lambda: (device_list(), device_offers_list(pricing_model="on_demand")), runs)
    return {
        "settings": "in-process, DEBUG=1, the same throwaway SQLite database",
        "devices": len(devices),
        "gpu_counts": [1, 2, 4, 8],
        "offers_on_demand": offer_count,
        "queries_per_catalogue_load": catalogue_queries,
        "goal_ms": ENGINE_GOAL_MS,
        "workloads": workloads,
        "sizing_request_breakdown": {
            "request_body": SIZING_BODY,
            "steps": breakdown,
            "sum_of_medians_ms": round(sum(step["median_ms"] for step in breakdown.values()), 3),
            "render_json_drf_renderer": drf_render,
        },
        "catalogue_reload_after_a_write": reload,
    }
