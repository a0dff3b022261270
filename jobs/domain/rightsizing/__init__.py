"""Right-sizing from measurements: what bounds a job (`verdict`), how its measured step would
run on other GPUs and what that costs (`project`), and a sentence saying what to do
(`recommendation`). Plain Python: figures and offers come in as values from the catalogue.
"""

from jobs.domain.rightsizing.devices import DeviceSpec, Offer
from jobs.domain.rightsizing.observed import ObservedJob, observe
from jobs.domain.rightsizing.projection import OfferCost, Projection, Range, project
from jobs.domain.rightsizing.recommend import recommendation
from jobs.domain.rightsizing.verdict import Evidence, Verdict, verdict

__all__ = [
    "DeviceSpec",
    "Evidence",
    "ObservedJob",
    "Offer",
    "OfferCost",
    "Projection",
    "Range",
    "Verdict",
    "observe",
    "project",
    "recommendation",
    "verdict",
]
