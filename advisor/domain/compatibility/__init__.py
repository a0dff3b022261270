"""What runs where (no Django): the accelerator families (platforms.py), the sourced table of
which stack and feature runs on which family (table.py, citing sources.py), and the other
stacks that run the work where the chosen one does not, with what the move costs the team's
code (moves.py). Sizing and right-sizing both read it.

It may import the standard library, its own modules and the portability knowledge's verdict
words (advisor/domain/portability/rule.py)."""

from advisor.domain.compatibility.platforms import PLATFORM_NAMES, platform_of, vendor_of
from advisor.domain.compatibility.table import (
    BITSANDBYTES_4BIT,
    BITSANDBYTES_8BIT_OPTIMIZER,
    FLASH_ATTENTION_2,
    FP8_KERNELS,
    MXFP4_KERNELS,
    SUBJECT_LABELS,
    TABLE,
    Entry,
    Support,
    not_running_reason,
    partial_warning,
    support,
    table_rows,
)

__all__ = [
    "BITSANDBYTES_4BIT",
    "BITSANDBYTES_8BIT_OPTIMIZER",
    "FLASH_ATTENTION_2",
    "FP8_KERNELS",
    "MXFP4_KERNELS",
    "PLATFORM_NAMES",
    "SUBJECT_LABELS",
    "TABLE",
    "Entry",
    "Support",
    "not_running_reason",
    "partial_warning",
    "platform_of",
    "support",
    "table_rows",
    "vendor_of",
]
