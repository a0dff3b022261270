"""The queueing model of one replica (advisor/domain/planning/queueing.py) against a
discrete-event simulation of the same server: seeded Poisson arrivals into a continuous-batching
server with chunked prefill, decode first, whose iterations are one forward pass over the
engine's decode step and prefill, less what the two share (timing.py). Below saturation the
model's p95 time to first token and inter-token latency are within MARGIN of the simulation's."""

import itertools
import math
import random
from collections import deque
from dataclasses import replace

import pytest

from advisor.domain.planning.queueing import (
    ReplicaQueue,
    StepTimes,
    Traffic,
    poisson,
    weighted_quantile,
)
from advisor.domain.planning.timing import ReplicaTimes
from advisor.domain.sizing.bundled_models import bundled_models
from advisor.domain.sizing.layout import Parallelism
from advisor.domain.sizing.serving_memory import PREFILL_CHUNK_TOKENS
from advisor.domain.sizing.workload import Workload
from tests.advisor.devices import GPUS

MARGIN = 0.15
SIMULATED_REQUESTS = 6000
WARM_UP_SHARE = 0.1


def simulate(rate: float, times: StepTimes, traffic: Traffic, seed: int) -> tuple[float, float]:
    """p95 time to first token and p95 inter-token latency (seconds) of SIMULATED_REQUESTS
    Poisson arrivals; the first WARM_UP_SHARE of them are left out."""
    rng = random.Random(seed)
    arrivals, now = [], 0.0
    for _ in range(SIMULATED_REQUESTS):
        now += rng.expovariate(rate)
        arrivals.append(now)
    warm_up = int(WARM_UP_SHARE * SIMULATED_REQUESTS)
    per_prompt, per_iteration = traffic.chunks_per_prompt, traffic.chunks_per_iteration
    waiting: deque[list[int]] = deque()  # [request, prompt chunks left]
    running: list[int] = []  # output tokens each running request has left
    first_tokens, iterations = [], []  # iterations: (length, requests that got a token)
    now, arrived = 0.0, 0
    while arrived < len(arrivals) or waiting or running:
        while arrived < len(arrivals) and arrivals[arrived] <= now:
            waiting.append([arrived, per_prompt])
            arrived += 1
        if not waiting and not running:
            now = arrivals[arrived]
            continue
        budget, chunks, prefilled = per_iteration, 0, []
        while waiting and budget:
            head = waiting[0]
            taken = min(head[1], budget)
            head[1] -= taken
            budget -= taken
            chunks += taken
            if head[1] == 0:
                prefilled.append(waiting.popleft()[0])
        length = times.decode_seconds(len(running)) if running else 0.0
        if chunks:
            tokens = chunks * traffic.chunk_prompt_tokens
            length += times.prefill_seconds(*traffic.prefill_shape(chunks))
            if running:  # one forward pass: what the two share is paid once
                length -= times.shared_seconds(tokens, len(running))
        now += length
        if running and arrived > warm_up:
            iterations.append((length, len(running)))
        running = [left - 1 for left in running if left > 1]
        for request in prefilled:
            if request >= warm_up:
                first_tokens.append((now - arrivals[request], 1.0))
            running.append(traffic.output_tokens - 1)
    return weighted_quantile(first_tokens, 0.95), weighted_quantile(iterations, 0.95)


@pytest.fixture(scope="module")
def h100_llama_8b() -> tuple[ReplicaTimes, Traffic]:
    """Llama 3.1 8B on one H100: 2,000-token prompts, 300-token answers (the issue's load)."""
    architecture = bundled_models()["llama-3.1-8b"].architecture()
    workload = Workload(architecture, context_tokens=2300, output_tokens=300)
    times = ReplicaTimes(workload, GPUS["H100-SXM"], Parallelism(1, tensor_parallel=1))
    return times, Traffic(2000, 300, PREFILL_CHUNK_TOKENS, max_concurrency=10_000)


@pytest.fixture(scope="module")
def h100_qwen_7b_chat() -> tuple[ReplicaTimes, Traffic]:
    """Qwen2.5 7B on one H100, short prompts (300 tokens) and longer answers (500): a budget
    holds 27 prompts."""
    architecture = bundled_models()["qwen2.5-7b"].architecture()
    workload = Workload(architecture, context_tokens=800, output_tokens=500)
    times = ReplicaTimes(workload, GPUS["H100-SXM"], Parallelism(1, tensor_parallel=1))
    return times, Traffic(300, 500, PREFILL_CHUNK_TOKENS, max_concurrency=10_000)


@pytest.mark.parametrize("share_of_bound", [0.3, 0.6, 0.9])
def test_the_model_agrees_with_a_simulation_of_the_same_server(h100_llama_8b, share_of_bound):
    _agrees(*h100_llama_8b, share_of_bound)


@pytest.mark.parametrize("share_of_bound", [0.3, 0.6])
def test_the_model_agrees_with_a_simulation_for_short_prompts(h100_qwen_7b_chat, share_of_bound):
    _agrees(*h100_qwen_7b_chat, share_of_bound)


def _agrees(times: ReplicaTimes, traffic: Traffic, share_of_bound: float) -> None:
    expected = times.at("expected")
    queue = ReplicaQueue(expected, traffic)
    rate = share_of_bound * queue.rate_bound()
    model = queue.at(rate)
    ttft, itl = simulate(rate, expected, traffic, seed=7)
    assert model.ttft_p95_s == pytest.approx(ttft, rel=MARGIN)
    assert model.itl_p95_s == pytest.approx(itl, rel=MARGIN)


def test_latencies_grow_with_the_load(h100_llama_8b):
    times, traffic = h100_llama_8b
    queue = ReplicaQueue(times.at("expected"), traffic)
    bound = queue.rate_bound()
    latencies = [queue.at(share * bound) for share in (0.1, 0.4, 0.7, 1.0)]
    for lighter, heavier in itertools.pairwise(latencies):
        assert heavier.ttft_p95_s >= lighter.ttft_p95_s
        assert heavier.e2e_p95_s >= lighter.e2e_p95_s
        assert heavier.concurrency > lighter.concurrency


def test_one_request_alone_waits_for_its_prefill_and_a_decode_step(h100_llama_8b):
    times, traffic = h100_llama_8b
    expected = times.at("expected")
    alone = ReplicaQueue(expected, traffic).at(1e-9)
    prefill = expected.prefill_seconds(traffic.prompt_tokens, 1, 0.0)
    step = expected.decode_seconds(1)
    # Its own iteration is one pass over its prompt and a decode step, the weights read once.
    own = prefill + step - expected.shared_seconds(traffic.prompt_tokens, 1)
    assert prefill <= own < prefill + step
    assert own < alone.ttft_p95_s <= own + step
    assert alone.itl_p95_s == pytest.approx(step, rel=1e-6)


def test_an_iteration_reads_the_weights_once_for_its_prefill_and_its_decodes(h100_llama_8b):
    times, _ = h100_llama_8b
    expected = times.at("expected")
    # A short prompt is bound by the weight read as a decode step is: together they cost
    # about one pass, not two.
    short = expected.prefill_seconds(64, 1, 0.0) + expected.decode_seconds(8)
    assert expected.shared_seconds(64, 8) > 0.3 * short
    # A long prompt is compute-bound: the decode step's reads hide under its matmuls, and
    # the decodes' own matmuls add (shared at most the decode step's weight read).
    assert 0 < expected.shared_seconds(8192, 8) <= expected.decode_seconds(8)
    assert expected.shared_seconds(0, 8) == expected.shared_seconds(64, 0) == 0


def test_past_the_bound_the_replica_is_not_planned(h100_llama_8b):
    times, traffic = h100_llama_8b
    queue = ReplicaQueue(times.at("expected"), traffic)
    assert queue.at(queue.rate_bound() * 1.01) is None
    assert "prompt queue grows without end" in queue.limit
    assert queue.rate_bound() < queue.saturation_rate()


def test_a_small_kv_pool_caps_the_rate(h100_llama_8b):
    times, traffic = h100_llama_8b
    small = Traffic(traffic.prompt_tokens, traffic.output_tokens, traffic.chunk_tokens, 8)
    queue = ReplicaQueue(times.at("expected"), small)
    assert queue.at(0.5 * queue.rate_bound()) is None
    assert "KV pool" in queue.limit


def test_a_prompt_longer_than_the_budget_runs_in_equal_chunks():
    traffic = Traffic(20_000, 10, 8192, 100)
    assert traffic.chunks_per_prompt == 3
    assert traffic.chunk_prompt_tokens == math.ceil(20_000 / 3) <= 8192
    assert traffic.chunks_per_iteration == 1
    assert Traffic(2000, 10, 8192, 100).chunks_per_iteration == 4


@pytest.mark.parametrize("mean", [0.0, 0.3, 4.0, 80.0, 5000.0])
def test_poisson_counts_hold_the_whole_law_around_the_mean(mean):
    counts = poisson(mean)
    assert sum(p for _, p in counts) == pytest.approx(1.0, abs=1e-6)
    assert sum(count * p for count, p in counts) == pytest.approx(mean, rel=1e-6, abs=1e-9)


def test_a_light_load_after_a_heavy_one_is_answered_as_from_an_empty_queue(h100_llama_8b):
    times, traffic = h100_llama_8b
    warmed = ReplicaQueue(times.at("expected"), traffic)
    warmed.at(0.9 * warmed.rate_bound())
    fresh = ReplicaQueue(times.at("expected"), traffic)
    light = 0.05 * fresh.rate_bound()
    assert warmed.at(light).ttft_p95_s == pytest.approx(fresh.at(light).ttft_p95_s, rel=1e-4)


def test_a_search_started_past_the_kv_pool_still_finds_a_load_that_fits():
    """The KV pool refuses a rate only where the concurrency it settles at does not fit, not
    where a guess on the way (here another end's answer, slower, as _at_peak starts from) did."""

    def linear(base_seconds: float) -> StepTimes:
        return StepTimes(
            decode_seconds=lambda concurrency: base_seconds + 2e-4 * concurrency,
            prefill_seconds=lambda tokens, prompts, prefix: 0.004 + 2e-5 * tokens * prompts,
            shared_seconds=lambda tokens, concurrency: 0.0,
        )

    traffic = Traffic(200, 300, 2048, max_concurrency=100)
    slower = ReplicaQueue(linear(0.02), replace(traffic, max_concurrency=10**6))
    assert slower.at(9.0).concurrency > traffic.max_concurrency
    fresh = ReplicaQueue(linear(0.01), traffic).at(9.0)
    warm = ReplicaQueue(linear(0.01), traffic, slower).at(9.0)
    assert fresh is not None and warm is not None
    assert warm.concurrency == pytest.approx(fresh.concurrency, rel=1e-3)
    assert fresh.concurrency + 1.6449 * math.sqrt(fresh.concurrency) <= traffic.max_concurrency


def test_short_prompts_in_one_iteration_attend_each_to_its_own(h100_qwen_7b_chat):
    times, traffic = h100_qwen_7b_chat
    queue = ReplicaQueue(times.at("expected"), traffic)
    together = traffic.chunks_per_iteration
    assert traffic.prefill_shape(together) == (traffic.prompt_tokens, together, 0.0)
    side_by_side = times.prefill(traffic.prompt_tokens, together).expected
    as_one_prompt = times.prefill(traffic.prompt_tokens * together).expected
    assert queue.prefill_seconds(together // queue.group) == pytest.approx(side_by_side)
    assert side_by_side < as_one_prompt


def test_a_long_prompts_chunks_attend_to_the_chunks_before_them(h100_llama_8b):
    times, _ = h100_llama_8b
    traffic = Traffic(32_000, 300, 8192, max_concurrency=100)
    chunk, count, prefix = traffic.prefill_shape(1)
    assert (chunk, count, prefix) == (8000, 1, 1.5 * 8000)
    # The chunks' attention over the prompt adds up to the whole prompt's.
    whole = times.prefill(32_000).expected
    chunks = traffic.chunks_per_prompt * times.prefill(chunk, 1, prefix).expected
    assert chunks > traffic.chunks_per_prompt * times.prefill(chunk).expected
    assert chunks == pytest.approx(whole, rel=0.05)
