"""A service that follows its day: replicas per hour from a 24-hour load profile, and the
month's bill of a schedule that runs a reserved base around the clock and rents the rest on
demand, hour by hour.

How many replicas to reserve is a choice per replica level: the k-th replica is up in the
hours whose rate needs at least k. Reserving it costs the reserved rate for all 24 hours;
renting it costs the on-demand rate for the hours it runs. So the k-th is reserved exactly when
it runs more than (reserved / on-demand) of the day, the break-even share a reservation is
sold at (AWS's and Azure's reserved-instance guides state it that way).
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

from advisor.domain.planning.assumptions import HOURS_PER_MONTH

HOURS_PER_DAY = 24
# A service keeps one replica up in its quietest hour: it must answer the first request of the
# morning without a cold start (loading the weights takes minutes).
MIN_REPLICAS = 1


def replicas_by_hour(
    hourly_requests_per_second: Sequence[float], max_requests_per_second_per_replica: float
) -> list[int]:
    """The replicas each hour needs: its rate over what one replica serves, rounded up, and at
    least MIN_REPLICAS."""
    return [
        max(MIN_REPLICAS, math.ceil(rate / max_requests_per_second_per_replica - 1e-9))
        for rate in hourly_requests_per_second
    ]


@dataclass(frozen=True)
class ScheduledBill:
    usd_per_month: float
    reserved_replicas: int  # the base reserved around the clock (0: all on demand)
    replica_hours_per_day: int  # on-demand replica-hours a day above the base


def reserved_base(replicas: Sequence[int], reserved_fraction_of_on_demand: float | None) -> int:
    """The replica levels worth reserving: each runs more hours of the day than the reserved
    price's share of the on-demand price (none when nothing is reserved)."""
    if reserved_fraction_of_on_demand is None:
        return 0
    base = 0
    for level in range(1, max(replicas) + 1):
        hours_up = sum(1 for count in replicas if count >= level)
        if hours_up / HOURS_PER_DAY <= reserved_fraction_of_on_demand:
            break
        base = level
    return base


def scheduled_bill(
    replicas: Sequence[int],
    on_demand_usd_per_replica_hour: float,
    reserved_usd_per_replica_hour: float | None,
) -> ScheduledBill:
    """The month of a schedule: the reserved base around the clock at its hourly equivalent,
    and each hour's replicas above it on demand for that hour (a month is HOURS_PER_MONTH, so
    HOURS_PER_MONTH / 24 days of the profile)."""
    fraction = (
        None
        if reserved_usd_per_replica_hour is None
        else reserved_usd_per_replica_hour / on_demand_usd_per_replica_hour
    )
    base = reserved_base(replicas, fraction)
    above = sum(max(0, count - base) for count in replicas)
    days = HOURS_PER_MONTH / HOURS_PER_DAY
    reserved_usd = base * (reserved_usd_per_replica_hour or 0.0) * HOURS_PER_MONTH
    return ScheduledBill(
        usd_per_month=reserved_usd + above * on_demand_usd_per_replica_hour * days,
        reserved_replicas=base,
        replica_hours_per_day=above,
    )
