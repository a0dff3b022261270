"""The inter-node network of a multi-GPU instance (catalog/data/instance_networks.csv): the
fabric its GPU NICs join other instances over and their bandwidth, with the provider page that
states it. An instance the table does not list has no known fabric: `instance_network` returns
the assumption the sizing engine makes for it, marked as assumed."""

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

NETWORKS_PATH = Path(__file__).resolve().parents[1] / "data" / "instance_networks.csv"
# An instance with no listed fabric: the common data-centre Ethernet NIC of GPU hosts.
ASSUMED_NETWORK_GBPS = 100.0
ASSUMED_FABRIC = "unknown: assumed 100 Gbps Ethernet"


@dataclass(frozen=True)
class InstanceNetwork:
    fabric: str  # EFA v2, InfiniBand NDR, RoCE...
    network_gbps: float  # the instance's GPU NICs together, one direction
    source_url: str | None  # None: not listed, assumed
    retrieved: str | None = None

    @property
    def assumed(self) -> bool:
        return self.source_url is None

    @property
    def network_gb_s(self) -> float:
        """Decimal GB/s, the unit the engine's other links are in."""
        return self.network_gbps / 8


ASSUMED_NETWORK = InstanceNetwork(ASSUMED_FABRIC, ASSUMED_NETWORK_GBPS, None)


@cache
def _networks() -> dict[tuple[str, str], InstanceNetwork]:
    with NETWORKS_PATH.open(newline="") as handle:
        lines = (line for line in handle if not line.startswith("#"))
        return {
            (row["provider"], row["instance_type"]): InstanceNetwork(
                row["fabric"], float(row["network_gbps"]), row["source_url"], row["retrieved"]
            )
            for row in csv.DictReader(lines)
        }


def instance_network(provider: str, instance_type: str) -> InstanceNetwork:
    """The instance's listed fabric, or the assumed one when the table does not list it."""
    return _networks().get((provider, instance_type), ASSUMED_NETWORK)


def listed_networks() -> dict[tuple[str, str], InstanceNetwork]:
    """Every listed (provider, instance type) with its fabric."""
    return dict(_networks())
