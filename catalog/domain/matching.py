"""Matching a provider's GPU name to a catalogue GPU.

Providers spell GPUs their own way, and the same spelling can mean different parts: SkyPilot's
`A100` is the 40 GB card while `A100-80GB` is the 80 GB one; Lambda's `RTX6000` is the Turing
Quadro RTX 6000, not the RTX 6000 Ada; `H100` is an SXM part at AWS and a PCIe card in Lambda's
`gpu_1x_h100_pcie`. Rules are therefore explicit, ordered, and may look at the instance type
and the feed's GPU description. A rule with no target records a name we know and deliberately
do not match, with the reason. A rule may name several siblings (`A100-40GB-PCIE|A100-80GB-PCIE`):
the feed's memory per GPU then picks one, and without it the quote is refused with that reason.
A name no rule covers is reported, never guessed.
"""

import csv
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from catalog.domain.quotes import PriceQuote

# Memory a feed reports may differ a little from the datasheet (usable vs nameplate, GiB vs GB
# rounding: an H100's 80 GB shows as 79.6); a larger gap means another part (a 48 GB RTX 4090
# is a modified board, not the catalogue's 24 GB card).
MEMORY_TOLERANCE = Decimal("0.10")


@dataclass(frozen=True)
class AliasRule:
    source: str
    accelerator: str
    canonical_key: str
    provider: str = ""
    hint_pattern: str = ""
    reason: str = ""
    # False where the feed's memory figure is known to be something else than the chip's (EC2
    # reports 512 GiB per Trainium2 device; the chip has 96 GiB).
    check_memory: bool = True
    _hint: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    @property
    def candidates(self) -> tuple[str, ...]:
        """The catalogue GPUs this rule may mean; more than one is decided by memory."""
        return tuple(key for key in self.canonical_key.split("|") if key)

    def applies_to(self, source: str, quote: PriceQuote) -> bool:
        if self.source != source or self.accelerator.lower() != quote.accelerator_name.lower():
            return False
        if self.provider and self.provider != quote.provider:
            return False
        if self._hint is not None:
            return bool(self._hint.search(f"{quote.instance_type} {quote.gpu_description}"))
        return True


def parse_alias_rules(lines: Iterable[str]) -> list[AliasRule]:
    """Read rules from CSV: source, accelerator, provider, hint_regex, canonical_key, reason and
    an optional feed_memory column (`ignore`: the feed's memory figure is not the chip's)."""
    rules = []
    for row in csv.DictReader(line for line in lines if not line.lstrip().startswith("#")):
        hint = (row.get("hint_regex") or "").strip()
        rules.append(
            AliasRule(
                source=row["source"].strip(),
                accelerator=row["accelerator"].strip(),
                canonical_key=(row.get("canonical_key") or "").strip(),
                provider=(row.get("provider") or "").strip(),
                hint_pattern=hint,
                reason=(row.get("reason") or "").strip(),
                check_memory=(row.get("feed_memory") or "").strip().lower() != "ignore",
                _hint=re.compile(hint, re.IGNORECASE) if hint else None,
            )
        )
    return rules


@dataclass(frozen=True)
class Match:
    canonical_key: str | None
    reason: str

    @property
    def matched(self) -> bool:
        return self.canonical_key is not None


class GpuMatcher:
    """First applicable rule wins; then the quote's memory must agree with the datasheet."""

    def __init__(
        self, rules: Iterable[AliasRule], memory_gib_by_key: Mapping[str, Decimal]
    ) -> None:
        self._rules = list(rules)
        self._memory_gib_by_key = dict(memory_gib_by_key)
        unknown = {key for r in self._rules for key in r.candidates} - set(self._memory_gib_by_key)
        if unknown:
            raise ValueError(f"alias rules point at unknown GPUs: {', '.join(sorted(unknown))}")

    def match(self, source: str, quote: PriceQuote) -> Match:
        rule = next((r for r in self._rules if r.applies_to(source, quote)), None)
        if rule is None and quote.accelerator_name in self._memory_gib_by_key:
            # Our own spelling (Azure's SKU table and staff CSV imports use catalogue keys).
            rule = AliasRule(source, quote.accelerator_name, quote.accelerator_name)
        if rule is None:
            return Match(
                None, f"no alias rule for {quote.accelerator_name!r} from {quote.provider}"
            )
        if not rule.candidates:
            return Match(None, rule.reason or f"{quote.accelerator_name!r} is not in the catalogue")
        reported = quote.gpu_memory_gib if rule.check_memory else None
        if len(rule.candidates) > 1:
            return self._by_memory(rule, quote, reported)
        key = rule.candidates[0]
        expected = self._memory_gib_by_key[key]
        if reported is not None and abs(reported - expected) > expected * MEMORY_TOLERANCE:
            return Match(
                None,
                f"{quote.accelerator_name!r} reports {reported:.1f} GiB per GPU but "
                f"{key} has {expected} GiB: a different part",
            )
        return Match(key, rule.reason)

    def _by_memory(self, rule: AliasRule, quote: PriceQuote, reported: Decimal | None) -> Match:
        """Siblings that differ by memory (A100 40 or 80 GB): the reported memory decides."""
        siblings = " or ".join(rule.candidates)
        if reported is None:
            return Match(
                None,
                f"{quote.accelerator_name!r} from {quote.provider} is {siblings} and the feed "
                "reports no memory per GPU to tell them apart",
            )
        key = min(rule.candidates, key=lambda k: abs(self._memory_gib_by_key[k] - reported))
        expected = self._memory_gib_by_key[key]
        if abs(reported - expected) > expected * MEMORY_TOLERANCE:
            return Match(
                None,
                f"{quote.accelerator_name!r} reports {reported:.1f} GiB per GPU, which is none "
                f"of {siblings}",
            )
        return Match(key, f"{rule.reason} ({reported:.0f} GiB per GPU: {key})".lstrip())
