"""How much of an upload the scanner reads before it skips a file or gives up."""

from dataclasses import dataclass

MIB = 1 << 20


@dataclass(frozen=True)
class ScanLimits:
    # Archive members (files, folders, links) past this make the whole archive a ScanError.
    max_members: int = 20_000
    # A bigger file is skipped unread: sources this large are generated or vendored.
    max_member_bytes: int = 2 * MIB
    # Decompressed bytes read in all; past this the scan is a ScanError (a tar.gz bomb).
    max_total_bytes: int = 512 * MIB
    # Decompressed / compressed size of one zip member; source code compresses about 5:1.
    max_compression_ratio: int = 200
    # Findings a scan keeps in memory, counts and judges; past this the file where it stopped
    # is in `skipped`. A stored report lists far fewer of them (caps.py).
    max_findings: int = 50_000
