"""One serving replica under Poisson arrivals: its p95 time to first token, inter-token latency
and end-to-end time at a request rate, from its step times.

The replica is a continuous-batching server with chunked prefill, scheduled decode first (vLLM
V1's scheduler; Sarathi-Serve, Agrawal et al., OSDI 2024, arXiv 2403.02310): it runs iterations
back to back, each one a decode step for every running request plus up to `chunk_tokens` of
waiting prompt tokens, first come first served. An iteration is one forward pass: the decode
step at its concurrency plus the prefill of its prompt tokens, less what the two share (the
weights read once, the matmuls over all its tokens bound together: timing.py's
ReplicaTimes.shared). A prompt longer than the budget runs in equal chunks, one per iteration;
shorter prompts share an iteration, whole, as many as the budget holds. A request's first
token comes at the end of the iteration that ends its prompt; each later token one iteration
after the one before.

The model is the embedded Markov chain of prompt chunks waiting at each iteration's start: the
chunks an iteration admits are those of the requests that arrived during the one before
(Poisson with mean rate x its length), so long iterations bring long ones. The decode
concurrency is mean-field: Little's law over the output's iterations, solved together with the
mean iteration length. From the chain's stationary law:
- inter-token latency: the iterations' lengths, each iteration weighing the same;
- time to first token: an arrival lands in an iteration in proportion to its length, at a
  uniform point of it; it waits for that iteration's end, then for the chunks ahead of it
  (the queue left over, and whoever arrived earlier in the same iteration), then its own;
- end to end: the p95 time to first token plus the output's iterations at their mean, with
  the normal p95 of their sum's spread.
`quantile_at` reads the same distributions at another quantile (a published p50 or p99 is
compared like with like: tests/advisor/capacity_calibration.py).
"""

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, replace

from advisor.domain.planning.assumptions import MAX_PLANNED_LOAD_FRACTION
from advisor.domain.planning.distributions import coarse, poisson, weighted_quantile

P95 = 0.95
_Z_P95 = 1.6449  # the standard normal's 95th percentile
_LARGEST_QUEUE_CHUNKS = 400  # the chain's queue, cut off (below rate_bound it stays short)
_LARGEST_CONCURRENCY = 1e7
_RATE_BISECTIONS = 40
_TTFT_POISSON_TAIL = 1e-3
_GROUPED_PROMPTS_PER_ITERATION = 32
NO_LOAD_RATE = 1e-6  # requests per second: at or below, the load is nil
_LAW_POINTS = 24  # terms of a count's law in the latency distributions (coarse())
_ARRIVAL_POINTS = 8  # where in its iteration an arrival lands: midpoints of eighths
_CHAIN_SWEEPS = 120
_CHAIN_TOLERANCE = 1e-6
_CONCURRENCY_SWEEPS = 60
_CONCURRENCY_TOLERANCE = 2e-3


@dataclass(frozen=True)
class Traffic:
    prompt_tokens: int
    output_tokens: int
    chunk_tokens: int  # the prefill budget of one iteration
    max_concurrency: int  # the requests the KV pool holds at their final length
    # The p95 prompt and answer, when known: the objectives are held for a request of these
    # lengths in the queue of mean ones (ReplicaQueue.tail_extra_seconds); None: the means.
    prompt_tokens_p95: int | None = None
    output_tokens_p95: int | None = None

    @property
    def tail_output_tokens(self) -> int:
        return max(self.output_tokens, self.output_tokens_p95 or 0)

    @property
    def chunks_per_prompt(self) -> int:
        return math.ceil(self.prompt_tokens / self.chunk_tokens)

    @property
    def chunk_prompt_tokens(self) -> int:
        """One chunk of one prompt: the prompt in equal chunks within the budget."""
        return math.ceil(self.prompt_tokens / self.chunks_per_prompt)

    @property
    def chunks_per_iteration(self) -> int:
        return max(1, self.chunk_tokens // self.chunk_prompt_tokens)

    @property
    def largest_concurrency(self) -> float:
        """The most requests decoding on average whose p95 (near Poisson, as in an
        infinite-server queue) the KV pool holds: the largest c with c + z95·√c <= the pool."""
        root = (-_Z_P95 + math.sqrt(_Z_P95**2 + 4 * self.max_concurrency)) / 2
        return root * root

    def prefill_shape(self, chunks: int) -> tuple[int, int, float]:
        """What an iteration that takes `chunks` prompt chunks prefills: (tokens per prompt or
        chunk, how many, the tokens of its prompt cached before each). Short prompts go whole,
        side by side; a long prompt's chunk attends to the chunks before it, on average half
        the prompt's other chunks."""
        if self.chunks_per_prompt == 1:
            return self.prompt_tokens, chunks, 0.0
        chunk = self.chunk_prompt_tokens
        return chunk, chunks, (self.chunks_per_prompt - 1) / 2 * chunk


@dataclass(frozen=True)
class StepTimes:
    """One end (low, expected or high) of a replica's step times, in seconds."""

    decode_seconds: Callable[[int], float]  # one decode step at this many running requests
    # One forward pass over prompts (or chunks) of this many tokens, this many of them, each
    # past this many tokens of its prompt already cached (Traffic.prefill_shape).
    prefill_seconds: Callable[[int, int, float], float]
    # What an iteration that prefills this many prompt tokens while decoding this many
    # requests saves on the two apart (one forward pass: the weights read once).
    shared_seconds: Callable[[int, int], float]


@dataclass(frozen=True)
class Latency:
    ttft_p95_s: float
    itl_p95_s: float
    itl_mean_s: float
    e2e_p95_s: float
    concurrency: float  # requests decoding at once, on average


@dataclass(frozen=True)
class LatencyQuantile:
    """The latencies at one quantile of the same distributions `Latency` reads its p95 from."""

    quantile: float
    ttft_s: float
    itl_s: float
    e2e_s: float


class ReplicaQueue:
    """The chain for one replica, one end of its step times and one traffic; `at(rate)` keeps
    its last solution to start the next one from (a search asks for nearby rates)."""

    def __init__(
        self, times: StepTimes, traffic: Traffic, start: "ReplicaQueue | None" = None
    ) -> None:
        self.times = times
        self.traffic = traffic
        # Where a budget holds many short prompts, the chain counts them in groups arriving
        # together (batch Poisson: a wider spread than Poisson's, so slightly pessimistic
        # tails), so that its queue stays a few dozen states long.
        prompts_per_iteration = traffic.chunks_per_iteration // traffic.chunks_per_prompt
        self.group = max(1, math.ceil(prompts_per_iteration / _GROUPED_PROMPTS_PER_ITERATION))
        self._chain = replace(traffic, prompt_tokens=traffic.prompt_tokens * self.group)
        # The last solution, where the next one starts from (`start`'s, for another end of
        # the same replica's step times).
        self._stationary: list[float] = list(start._stationary) if start else [1.0]
        self._decode_cache: dict[int, float] = {}
        self._prefill_cache: dict[int, float] = {}
        self._shared_cache: dict[tuple[int, int], float] = {}  # (prompt tokens, concurrency)
        self._saturation: float | None = None
        self._last = start._last if start else (0.0, 0.0)  # a rate answered, its concurrency
        # Why the last rate asked for was not served (at() answered None).
        self.limit = ""

    def decode_seconds(self, concurrency: float) -> float:
        """The decode step at a mean concurrency: linear between whole ones; at least one
        request's step, as a replica with nothing decoding still runs the next iteration no
        sooner than that after an arrival (slightly pessimistic at no load)."""
        whole = max(1, math.floor(concurrency))
        below = self._decode(whole)
        if concurrency <= 1:
            return below
        return below + (concurrency - whole) * (self._decode(whole + 1) - below)

    def _decode(self, concurrency: int) -> float:
        if concurrency not in self._decode_cache:
            self._decode_cache[concurrency] = self.times.decode_seconds(concurrency)
        return self._decode_cache[concurrency]

    def prefill_seconds(self, chunks: int) -> float:
        """The prefill of `chunks` of the chain's chunks (each `group` prompts, or one chunk of
        a long prompt) in one forward pass."""
        if chunks not in self._prefill_cache:
            shape = self.traffic.prefill_shape(chunks * self.group)
            self._prefill_cache[chunks] = self.times.prefill_seconds(*shape) if chunks else 0.0
        return self._prefill_cache[chunks]

    def shared_seconds(self, chunks: int, concurrency: float) -> float:
        """What `chunks` prompt chunks share with the decode step at a mean concurrency in
        one iteration (StepTimes.shared_seconds)."""
        return self._shared_tokens(chunks * self._chain.chunk_prompt_tokens, concurrency)

    def _shared_tokens(self, tokens: int, concurrency: float) -> float:
        """What a prefill of `tokens` shares with the decode step at a mean concurrency: linear
        between whole concurrencies, from one request's step as decode_seconds."""
        if not tokens:
            return 0.0
        whole = max(1, math.floor(concurrency))
        below = self._shared(tokens, whole)
        if concurrency <= 1:
            return below
        return below + (concurrency - whole) * (self._shared(tokens, whole + 1) - below)

    def _shared(self, tokens: int, concurrency: int) -> float:
        key = (tokens, concurrency)
        if key not in self._shared_cache:
            self._shared_cache[key] = self.times.shared_seconds(tokens, concurrency)
        return self._shared_cache[key]

    def tail_extra_seconds(self, concurrency: float) -> float:
        """How much later a p95-length prompt's first token comes than a mean one's: its own
        iterations against the mean prompt's (own_prompt_seconds)."""
        traffic = self.traffic
        tail = traffic.prompt_tokens_p95
        if not tail or tail <= traffic.prompt_tokens:
            return 0.0
        extra = self.own_prompt_seconds(tail, concurrency) - self.own_prompt_seconds(
            traffic.prompt_tokens, concurrency
        )
        return max(0.0, extra)

    def own_prompt_seconds(self, prompt_tokens: int, concurrency: float) -> float:
        """The iterations a prompt of this length takes through the budget, in equal chunks:
        each a decode step at the mean concurrency and one chunk (past the chunks before it),
        less what the two share."""
        rounds = math.ceil(prompt_tokens / self.traffic.chunk_tokens)
        chunk = math.ceil(prompt_tokens / rounds)
        prefill = self.times.prefill_seconds(chunk, 1, (rounds - 1) / 2 * chunk)
        shared = self._shared_tokens(chunk, concurrency)
        return rounds * (self.decode_seconds(concurrency) + prefill - shared)

    def iteration_seconds(self, chunks: int, concurrency: float) -> float:
        """One iteration: the decode step at a mean concurrency and `chunks` prompt chunks, in
        one forward pass."""
        return (
            self.decode_seconds(concurrency)
            + self.prefill_seconds(chunks)
            - self.shared_seconds(chunks, concurrency)
        )

    def _full_iterations_keep_up(self, rate: float) -> bool:
        """Whether, with every iteration full of prompt chunks (an endless queue), the chunks
        cleared outpace the chunks arriving: the decode concurrency is then the rate x the
        output's full iterations (Little), found by iterating to its fixed point."""
        traffic = self._chain
        per_prompt, per_iteration = traffic.chunks_per_prompt, traffic.chunks_per_iteration
        decodes = max(traffic.output_tokens - 1, 0)
        concurrency = 0.0
        for _ in range(_CONCURRENCY_SWEEPS):
            full = self.iteration_seconds(per_iteration, concurrency)
            if rate / self.group * per_prompt * full >= per_iteration:
                return False
            updated = rate * decodes * full
            if updated > _LARGEST_CONCURRENCY:
                return False
            if abs(updated - concurrency) <= _CONCURRENCY_TOLERANCE * max(updated, 1.0):
                return True
            concurrency = updated
        return False

    def saturation_rate(self) -> float:
        """The rate at which the prompt queue grows without end (requests per second)."""
        if self._saturation is None:
            traffic = self._chain
            low = 0.0
            high = (
                self.group
                * traffic.chunks_per_iteration
                / (traffic.chunks_per_prompt * self.prefill_seconds(traffic.chunks_per_iteration))
            )
            for _ in range(_RATE_BISECTIONS):
                middle = (low + high) / 2
                low, high = (
                    (middle, high) if self._full_iterations_keep_up(middle) else (low, middle)
                )
            self._saturation = low
        return self._saturation

    def rate_bound(self) -> float:
        """The most this model answers for: MAX_PLANNED_LOAD_FRACTION of the saturation rate."""
        return MAX_PLANNED_LOAD_FRACTION * self.saturation_rate()

    def at(self, rate: float) -> Latency | None:
        """The p95 latencies at `rate` requests per second; None where the replica does not keep
        up with room to spare (past rate_bound), or the KV pool cannot hold the requests."""
        traffic = self.traffic
        # One request alone (no load) needs no bound, and the bound costs a search.
        if rate > NO_LOAD_RATE and rate > self.rate_bound():
            self.limit = (
                f"the load passes {MAX_PLANNED_LOAD_FRACTION:.0%} of the "
                f"{self.saturation_rate():,.2f} requests/s at which its prompt queue grows "
                "without end"
            )
            return None
        decodes = max(traffic.output_tokens - 1, 0)
        # The concurrency's p95 must fit the KV pool: the search never guesses past the most
        # it holds, and refuses only where the concurrency there still calls for more (the
        # updated concurrency grows with the guess: the answer lies past the pool).
        ceiling = traffic.largest_concurrency
        # The last answer's concurrency, scaled to this rate, starts the search: a search for
        # the most a replica serves asks for nearby rates one after the other.
        last_rate, last_concurrency = self._last
        concurrency = min(last_concurrency * rate / last_rate if last_rate else 0.0, ceiling)
        previous: tuple[float, float] | None = None  # the last guess and its excess
        for _ in range(_CONCURRENCY_SWEEPS):
            stationary = self._solve(rate, concurrency)
            updated = rate * decodes * self._mean_iteration(stationary, concurrency)
            excess = updated - concurrency
            converged = abs(excess) <= _CONCURRENCY_TOLERANCE * max(updated, 1.0)
            if updated > ceiling and (converged or concurrency >= ceiling):
                held = traffic.max_concurrency
                self.limit = (
                    f"the KV pool, which holds {held:,} request{'' if held == 1 else 's'}, fills"
                )
                return None
            if converged:
                # The chain just solved is the answer's (its decode step is within the
                # tolerance of the updated concurrency's), no second solve.
                self._last = (rate, updated)
                return self._latency(rate, stationary, concurrency, updated)
            guess = updated
            if previous is not None and excess != previous[1]:
                # The secant through the last two guesses, where it stays ahead of zero.
                secant = concurrency - excess * (concurrency - previous[0]) / (excess - previous[1])
                guess = secant if secant > 0 else updated
            previous = (concurrency, excess)
            concurrency = min(guess, ceiling)
        self._last = (rate, concurrency)
        return self._latency(rate, self._solve(rate, concurrency), concurrency, concurrency)

    def _mean_iteration(self, stationary: list[float], concurrency: float) -> float:
        per_iteration = self._chain.chunks_per_iteration
        return sum(
            share * self.iteration_seconds(min(queued, per_iteration), concurrency)
            for queued, share in enumerate(stationary)
        )

    def _solve(self, rate: float, concurrency: float) -> list[float]:
        """The stationary law of the chunks waiting at an iteration's start, by power
        iteration from the last solution (below rate_bound the queue settles)."""
        rate /= self.group  # groups of prompts arriving
        traffic = self._chain
        per_prompt, per_iteration = traffic.chunks_per_prompt, traffic.chunks_per_iteration
        # Arrivals during an iteration that serves this many chunks, made as the law needs
        # them (short prompts: a budget holds thousands).
        arrivals: dict[int, list[tuple[int, float]]] = {}
        longest = poisson(rate * self.iteration_seconds(per_iteration, concurrency))
        most = longest[-1][0] + 1  # counts past the longest iteration's are negligible
        largest_queue = max(_LARGEST_QUEUE_CHUNKS, 4 * per_prompt * most + per_iteration)
        # The last solution starts this one, cut to this rate's longest queue; where it held
        # nothing that short (a far heavier load solved before), the empty queue does.
        law = self._stationary[:largest_queue]
        mass = sum(law)
        law = [share / mass for share in law] if mass > 1e-9 else [1.0]
        for _ in range(_CHAIN_SWEEPS):
            following: list[float] = [0.0] * (len(law) + per_prompt * most)
            for queued, share in enumerate(law):
                if share < 1e-15:
                    continue
                served = min(queued, per_iteration)
                if served not in arrivals:
                    length = self.iteration_seconds(served, concurrency)
                    arrivals[served] = poisson(rate * length)
                left = queued - served
                for count, probability in arrivals[served]:
                    following[left + per_prompt * count] += share * probability
            while len(following) > 1 and following[-1] < 1e-15:
                following.pop()
            following = following[:largest_queue]
            total = sum(following)
            following = [share / total for share in following]
            change = sum(
                abs(a - b) for a, b in zip(following, law + [0.0] * len(following), strict=False)
            )
            law = following
            if change < _CHAIN_TOLERANCE:
                break
        self._stationary = law
        return law

    def quantile_at(self, rate: float, quantile: float) -> LatencyQuantile | None:
        """The latencies at `rate` requests per second at another quantile than the p95 (a
        published p50 or p99 compared like with like); None where `at(rate)` is None."""
        latency = self.at(rate)
        if latency is None:
            return None
        iterations, itl_mean, itl_variance = self._iterations(self._stationary, latency.concurrency)
        ttft = weighted_quantile(
            self._first_token_times(rate, self._stationary, latency.concurrency), quantile
        )
        decodes = max(self._chain.output_tokens - 1, 0)
        spread = statistics.NormalDist().inv_cdf(quantile) * math.sqrt(decodes * itl_variance)
        return LatencyQuantile(
            quantile=quantile,
            ttft_s=ttft,
            itl_s=weighted_quantile(iterations, quantile),
            e2e_s=ttft + decodes * itl_mean + spread,
        )

    def _iterations(
        self, stationary: list[float], concurrency: float
    ) -> tuple[list[tuple[float, float]], float, float]:
        """The iterations a running request sees, with their weights, and their mean and
        variance."""
        per_iteration = self._chain.chunks_per_iteration
        served = [
            (min(queued, per_iteration), share)
            for queued, share in enumerate(stationary)
            if share >= 1e-9
        ]
        # A running request shares each iteration with the others running, Poisson around the
        # mean (an infinite-server queue seen from one of its customers): its decode steps
        # spread with them.
        others = coarse(poisson(concurrency, _TTFT_POISSON_TAIL), _LAW_POINTS)
        iterations = [
            (self.iteration_seconds(chunks, 1 + count), p_count * share)
            for count, p_count in others
            for chunks, share in served
        ]
        weight = sum(share for _, share in iterations)
        itl_mean = sum(length * share for length, share in iterations) / weight
        itl_variance = (
            sum(share * (length - itl_mean) ** 2 for length, share in iterations) / weight
        )
        return iterations, itl_mean, itl_variance

    def _latency(
        self, rate: float, stationary: list[float], solved_at: float, concurrency: float
    ) -> Latency:
        """The latencies from the chain solved with iterations at the concurrency `solved_at`;
        `concurrency` is the answer's (the two agree within the search's tolerance)."""
        iterations, itl_mean, itl_variance = self._iterations(stationary, concurrency)
        itl_p95 = weighted_quantile(iterations, P95)
        ttft_p95 = weighted_quantile(
            self._first_token_times(rate, stationary, solved_at), P95
        ) + self.tail_extra_seconds(solved_at)
        decodes = max(self.traffic.tail_output_tokens - 1, 0)
        e2e_p95 = ttft_p95 + decodes * itl_mean + _Z_P95 * math.sqrt(decodes * itl_variance)
        return Latency(ttft_p95, itl_p95, itl_mean, e2e_p95, concurrency)

    def _first_token_times(
        self, rate: float, stationary: list[float], concurrency: float
    ) -> list[tuple[float, float]]:
        """Times to first token with their weights, over the iteration an arrival lands in,
        where in it, and who arrives in it before and after."""
        rate /= self.group  # groups of prompts arriving
        traffic = self._chain
        per_prompt, per_iteration = traffic.chunks_per_prompt, traffic.chunks_per_iteration
        lengths: dict[int, float] = {}

        def length_of(chunks: int) -> float:
            if chunks not in lengths:
                lengths[chunks] = self.iteration_seconds(chunks, concurrency)
            return lengths[chunks]

        times = []
        for queued, share in enumerate(stationary):
            if share < 1e-7:
                continue
            served = min(queued, per_iteration)
            length = length_of(served)
            landing = share * length / _ARRIVAL_POINTS
            for point in range(_ARRIVAL_POINTS):
                elapsed = (point + 0.5) / _ARRIVAL_POINTS
                after_law = coarse(
                    poisson(rate * (1 - elapsed) * length, _TTFT_POISSON_TAIL), _LAW_POINTS
                )
                before_law = coarse(
                    poisson(rate * elapsed * length, _TTFT_POISSON_TAIL), _LAW_POINTS
                )
                for before, p_before in before_law:
                    through_own = queued - served + per_prompt * (before + 1)
                    rounds = math.ceil(through_own / per_iteration)
                    waited = (1 - elapsed) * length + (rounds - 1) * length_of(per_iteration)
                    # Chunks in the round that ends its prompt: its own and those ahead, and
                    # those behind while the budget lasts.
                    in_last = through_own - (rounds - 1) * per_iteration
                    left = 1.0
                    for after, p_after in after_law:
                        chunks = in_last + per_prompt * after
                        if chunks >= per_iteration:
                            break
                        times.append((waited + length_of(chunks), landing * p_before * p_after))
                        left -= p_after
                    if left > 0:
                        full = waited + length_of(per_iteration)
                        times.append((full, landing * p_before * left))
        return times
