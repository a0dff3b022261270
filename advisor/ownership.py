"""Rent against buy on the answers: each candidate's `rent_vs_buy` (domain/planning/
rent_vs_buy.py) from the bundled purchase prices and the catalogue's on-demand and reserved
offers of the same part and count. A candidate's comparison depends only on its GPU type and
count, so it is added to the answer's candidates by those two."""

from functools import cache
from typing import Any

from advisor.domain.devices import Device, Offer
from advisor.domain.planning.ownership import OwnershipInputs, PurchasePrice, purchase_prices_load
from advisor.domain.planning.rent_vs_buy import RENTED_PRICING, rent_vs_buy, rent_vs_buy_report
from advisor.domain.sizing.rental import Rental
from advisor.domain.sizing.workload import Workload
from advisor.selectors import catalogue_snapshot_get


@cache
def purchase_prices() -> dict[str, PurchasePrice]:
    return purchase_prices_load()


def _rented_offers() -> tuple[dict[str, Device], dict[str, list[Offer]]]:
    offers: dict[str, list[Offer]] = {}
    devices: list[Device] = []
    for pricing_model in RENTED_PRICING:
        devices, by_device = catalogue_snapshot_get(pricing_model=pricing_model)
        for key, rows in by_device.items():
            offers[key] = [*offers.get(key, ()), *rows]
    return {device.key: device for device in devices}, offers


def rent_vs_buy_attach(
    rows: list[dict[str, Any] | None], *, rental: Rental, inputs: OwnershipInputs
) -> None:
    """Adds `rent_vs_buy` to each answer row (a dict with `gpu` and `gpu_count`; None rows are
    skipped): null where the part has no sourced purchase price."""
    devices, offers = _rented_offers()
    prices = purchase_prices()
    compared: dict[tuple[str, int], dict[str, Any] | None] = {}
    for row in rows:
        if row is None:
            continue
        if not row.get("fits", True):
            row["rent_vs_buy"] = None
            continue
        key = (row["gpu"], row["gpu_count"])
        if key not in compared:
            device = devices.get(row["gpu"])
            result = None
            if device is not None:
                result = rent_vs_buy(
                    device,
                    row["gpu_count"],
                    offers.get(device.key, ()),
                    rental=rental,
                    price=prices.get(device.key),
                    inputs=inputs,
                )
            compared[key] = rent_vs_buy_report(result)
        row["rent_vs_buy"] = compared[key]


def capacity_rent_vs_buy(
    report: dict[str, Any], *, rental: Rental, inputs: OwnershipInputs
) -> None:
    """Every candidate of a capacity answer, and its plan, compared with buying."""
    rent_vs_buy_attach([report["plan"], *report["candidates"]], rental=rental, inputs=inputs)


def sizing_rent_vs_buy(
    report: dict[str, Any], *, workload: Workload, inputs: OwnershipInputs
) -> None:
    """A training answer's candidates and recommendation compared with buying; a serving
    answer is left as it is (a capacity plan compares a service)."""
    if not workload.task.trains:
        return
    rent_vs_buy_attach(
        [report["recommendation"], *report["candidates"]], rental=workload.rental, inputs=inputs
    )
