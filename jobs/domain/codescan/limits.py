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
    # Findings a scan counts and judges, every one kept in memory until the verdicts (about
    # 0.6 KB each: 1,000,000 is about 600 MB, under the analysis child's 3 GiB). Past this the
    # counts are lower bounds: the report says "at least" and names the file where it stopped.
    # A stored report lists far fewer of them (caps.py).
    max_findings: int = 1_000_000
