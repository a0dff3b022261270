"""How fresh an offer's price is: one of three states, and the words a page puts beside it.

- live: the latest successful refresh of its feed listed it;
- snapshot: it comes from the bundled snapshot and no feed has refreshed its provider since;
- stale: a later successful refresh of a feed covering its provider no longer lists it. Only
  this state may say the provider may have withdrawn it.

An offer a staff member entered or edited is listed by no refresh and is live: the person
vouches for it, and its observation date is the edit's, until a refresh covering its provider
lists it again (live) or omits it (stale).
"""

from datetime import datetime

LIVE = "live"
SNAPSHOT = "snapshot"
STALE = "stale"
FRESHNESS_STATES = (LIVE, SNAPSHOT, STALE)
BUNDLED_SOURCE = "bundled"  # catalog.models.PriceSource.BUNDLED


def offer_freshness(*, listed_by_source: str | None, delisted: bool) -> str:
    """`listed_by_source`: the source of the last refresh that listed the offer (None: none
    did); `delisted`: a later successful refresh covering its provider did not list it."""
    if delisted:
        return STALE
    return SNAPSHOT if listed_by_source == BUNDLED_SOURCE else LIVE


def freshness_note(state: str, observed_at: datetime) -> str:
    """What a page shows next to the price."""
    day = f"{observed_at:%Y-%m-%d}"
    if state == SNAPSHOT:
        return f"bundled snapshot of {day}"
    if state == STALE:
        return f"stale: priced {day}, no longer listed by its feed (may have been withdrawn)"
    return f"live, priced {day}"
