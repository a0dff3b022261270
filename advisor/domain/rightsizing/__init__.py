"""Right-sizing from measurements: what bounds a job (`verdict`), the machine it ran on and its
idle GPUs (`node_of`), how its measured step would run on other GPUs and what renting them
costs (`project`), and a sentence saying what to do (`recommendation`). Plain Python: figures
and offers come in as values from the catalogue.
"""

from advisor.domain.devices import Device, Offer
from advisor.domain.ranges import Range
from advisor.domain.rightsizing.advice_sentence import (
    idle_gpus_priced,
    recommendation,
    rent_advice,
)
from advisor.domain.rightsizing.node import Node, NodeGpu, node_of
from advisor.domain.rightsizing.observed import ObservedJob, observe
from advisor.domain.rightsizing.projection import OfferCost, Projection, project
from advisor.domain.rightsizing.verdict import Evidence, Verdict, verdict

__all__ = [
    "Device",
    "Evidence",
    "Node",
    "NodeGpu",
    "ObservedJob",
    "Offer",
    "OfferCost",
    "Projection",
    "Range",
    "Verdict",
    "idle_gpus_priced",
    "node_of",
    "observe",
    "project",
    "recommendation",
    "rent_advice",
    "verdict",
]
