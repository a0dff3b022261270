"""What a rule of the catalogue is (rules.py lists them): its id, name, default severity, what
it matches, Why and the portable alternative; and the three severities a finding can carry."""

from dataclasses import dataclass

REWRITE_RISK = "rewrite-risk"
RE_TUNE = "re-tune"
INFO = "info"
SEVERITIES = (REWRITE_RISK, RE_TUNE, INFO)


@dataclass(frozen=True)
class Rule:
    id: str
    name: str  # PascalCase, for SARIF reportingDescriptor.name
    severity: str  # the default
    summary: str  # what is matched, one line
    why: str
    alternative: str

    @property
    def category(self) -> str:
        return self.id.rstrip("0123456789")
