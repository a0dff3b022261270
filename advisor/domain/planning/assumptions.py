"""What a capacity plan assumes beyond the sizing engine: the month a bill covers, the spare
replicas a spot plan keeps for preemptions, and the sentences the answer states them in."""

from advisor.domain.provenance import fitted

# A month of a service that never stops: 8,760 hours a year over 12, the figure the clouds'
# pricing calculators bill a month at (AWS Pricing Calculator, Azure's "730 hours per month").
HOURS_PER_MONTH = 730
fitted(
    "HOURS_PER_MONTH",
    fitted_on=(),
    source="8,760 hours a year over 12: the month AWS's and Azure's pricing calculators bill",
)
# A spot replica can be taken back at any time (AWS's two-minute notice, GCP's 30 seconds),
# and its replacement has to start and load the weights before it serves: a spot plan keeps
# this share of spare replicas, and at least one, so that the peak is still served while one
# in five is being replaced. AWS's Spot Instance Advisor bands interruption frequency from
# under 5% to over 20% of instances a month; a fifth covers the worst band.
SPOT_SPARE_REPLICA_FRACTION = 0.2
fitted(
    "SPOT_SPARE_REPLICA_FRACTION",
    fitted_on=(),
    source="assumption: AWS Spot Instance Advisor's worst interruption band (over 20% a month)",
)

# A replica is planned to at most this share of the rate at which its prompt queue grows
# without end: near saturation the p95 waits grow without bound and every small error in a
# step time moves them most; the queueing model is checked against a simulation below it.
MAX_PLANNED_LOAD_FRACTION = 0.9
fitted(
    "MAX_PLANNED_LOAD_FRACTION",
    fitted_on=(),
    source="assumption: headroom below saturation, where the queueing model was simulated",
)


def planning_assumptions(
    prompt_tokens: int,
    output_tokens: int,
    chunk_tokens: int,
    pricing_model: str,
    *,
    hourly_profile: bool = False,
    tail_lengths: bool = False,
) -> list[str]:
    """The queueing model's and the bill's assumptions, as the answer states them."""
    return [
        "arrivals are Poisson at the peak rate, spread evenly over the replicas; every prompt "
        f"has {prompt_tokens:,} tokens and every answer {output_tokens:,} "
        "(the means, taken as fixed)",
        *(
            [
                "with p95 lengths given, the objectives are held for a request of those lengths "
                "in the queue of mean ones: its first token comes later by its extra tokens' "
                "prefill and a decode step per extra iteration, its answer runs the p95 output "
                "at the mean inter-token time (pessimistic: the p95 of a p95-length request is "
                "above the p95 over all requests)"
            ]
            if tail_lengths
            else []
        ),
        "each replica is a continuous-batching server with chunked prefill, decode first (vLLM "
        "V1's scheduler; Sarathi-Serve, OSDI 2024): an iteration is one decode step for every "
        f"running request plus up to {chunk_tokens:,} waiting prompt tokens, first come "
        "first served, and takes the engine's decode step at its concurrency plus the engine's "
        "prefill of those tokens",
        "p95 time to first token and inter-token latency from the embedded Markov chain of the "
        "prompt chunks waiting at each iteration (arrivals during one iteration are admitted "
        "at the next), with the decode concurrency from Little's law; checked against a "
        "simulation of the same server within 15% below saturation",
        "p95 end-to-end: the p95 time to first token plus the output's iterations at their "
        "mean, with the normal 95th percentile of their sum's spread",
        "a replica serves at most the requests its KV pool holds at their final length (the "
        "p95 of its concurrency must fit); no prefix caching, no speculative decoding",
        f"a replica is planned to at most {MAX_PLANNED_LOAD_FRACTION:.0%} of the rate at which "
        "its prompt queue grows without end",
        "replicas at peak: the peak rate over the most one replica sustains within the "
        "objectives (expected step times), rounded up; low / expected / high latencies are "
        "at that load with the engine's fastest, expected and slowest step times (null: the "
        "replica does not keep up at that end)",
        f"a month is {HOURS_PER_MONTH} hours of every replica, at the offer's price per GPU-hour",
        f"spot: {SPOT_SPARE_REPLICA_FRACTION:.0%} more replicas (at least one more), rounded "
        "up, so the peak is still served while preempted replicas are replaced",
        "reserved 1 and 3 years: every replica reserved for the term, at the feed's term "
        "price spread over its hours (paid whether the replica runs or not); null where no "
        "feed publishes a reservation for that offer",
        *(
            [
                "scheduled: each hour of the 24-hour profile gets the replicas its rate needs "
                "(at least one), the rate scaled by the peak's ratio to the busiest hour (a peak "
                "above that hour's average is the burst inside an hour); the replica levels "
                "that run more of the day than the 1-year reservation's share of the on-demand "
                "price are reserved around the clock, the rest rented on demand hour by hour "
                "(a month is 730 / 24 days of the profile; starting a replica is taken as "
                "instant)"
            ]
            if hourly_profile
            else ["scheduled: null without a 24-hour profile (hourly_requests_per_second)"]
        ),
        f"ranked by the {pricing_model} bill of the plans that meet every objective"
        + (" (the cheapest way to pay that is offered)" if pricing_model == "any" else ""),
    ]
