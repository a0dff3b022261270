"""Handlers that read the same in every language: a rule emitted as is, evidence of a portable
form, capacity and peak-throughput constants (MEM001, MEM002), the SKU-name and SM-count
detectors (MEM005, MEM006), an NVLink path's severity (COMM003), and the file-level heuristics
(PREC005, COMM006, MEM004)."""

import re
from collections.abc import Callable
from typing import Any

from advisor.domain.portability.rules import RE_TUNE
from jobs.domain.codescan import patterns
from jobs.domain.codescan.detect import IN_STRING, Detector, Hit


def emit_rule(rule_id: str) -> Callable[[Hit], None]:
    """A handler for patterns that are the rule: every hit is a finding."""

    def handle(hit: Hit) -> None:
        hit.emit(rule_id)

    return handle


def evidence(question: str) -> Callable[[Hit], None]:
    """A handler recording a portable form for the scorecard question of `question`."""

    def handle(hit: Hit) -> None:
        hit.note(question, re.sub(rb"\s+", b"", hit.text).decode("utf-8", "replace"))

    return handle


def peak_throughput(hit: Hit) -> None:
    """MEM002, unless the digits end a longer number (1312e12, 0.156e12)."""
    before = hit.scanner.data[hit.start - 1 : hit.start] if hit.start else b""
    if not (before.isalnum() or before in (b"_", b".")):
        hit.emit("MEM002")


def capacity_detectors(
    in_message_call: Callable[[Any], bool], drives_sizes: Callable[[Hit], bool]
) -> list[Detector]:
    """MEM001 (an HBM capacity, as a number or a string) and MEM002 (a datasheet peak), with
    the language's own reading of "only printed" and "feeds a size computation"."""

    def hbm_capacity(hit: Hit) -> None:
        if in_message_call(hit.node):
            return
        if drives_sizes(hit):
            hit.emit("MEM001")
        else:
            hit.emit("MEM001", severity=RE_TUNE, context="no size computation reads it")

    needles = (b"40", b"80")
    return [
        Detector("mem001", patterns.HBM_BYTES, hbm_capacity, gpu_only=True, needles=needles),
        Detector(
            "mem001_str",
            patterns.HBM_STRING,
            hbm_capacity,
            IN_STRING,
            gpu_only=True,
            needles=needles,
        ),
        Detector(
            "mem002",
            patterns.PEAK_THROUGHPUT,
            peak_throughput,
            gpu_only=True,
            needles=patterns.PEAK_THROUGHPUT_NEEDLES,
        ),
    ]


def sku_and_sm_count_detectors(
    sku_name: Callable[[Hit], None], sm_count: Callable[[Hit], None]
) -> list[Detector]:
    """MEM005 (a SKU's marketing name, in a string) and MEM006 (an SM-count literal), with the
    language's own handler for each."""
    return [
        Detector(
            "mem005",
            patterns.SKU_NAME,
            sku_name,
            IN_STRING,
            gpu_only=True,
            needles=patterns.SKU_NAME_NEEDLES,
        ),
        Detector(
            "mem006", patterns.SM_COUNT, sm_count, gpu_only=True, needles=patterns.SM_COUNT_NEEDLES
        ),
    ]


def emit_nvlink(hit: Hit, switch: bytes | None) -> None:
    """COMM003 at its default, or a re-tune where `switch` (the condition of a setting that
    selects the NVLink path) was found around the hit."""
    if switch is not None:
        setting = switch.decode("utf-8", "replace").strip()[:60]
        hit.emit("COMM003", severity=RE_TUNE, context=f"a setting selects it ({setting})")
    else:
        hit.emit("COMM003")


def tolerance(hit: Hit) -> None:
    """PREC005: a tolerance or loss scale within a few lines of tf32/TF32/A100 (comments
    included: that is where calibration is written down)."""
    window = hit.scanner.source.lines_around(hit.start, patterns.TOLERANCE_RADIUS_LINES)
    if patterns.TF32_NEARBY.search(window):
        hit.emit("PREC005")


_EIGHT_PER_NODE = re.compile(rb"GPUS_PER_NODE\s*=\s*8\b|nproc[-_]per[-_]node[=\s]+8\b")
_TOPOLOGY_QUERY = re.compile(
    rb"device_count|LOCAL_WORLD_SIZE|local_world_size|nvidia-smi\s+topo|get_topology|topology"
)


def eight_gpu_island(hit: Hit) -> None:
    """COMM006 (shared with shell scripts): TP 8 in a file that fixes 8 GPUs per node and
    never asks for the topology."""
    data = hit.scanner.data
    if _EIGHT_PER_NODE.search(data) and not _TOPOLOGY_QUERY.search(data):
        hit.emit("COMM006")


_SKU_CITATION = re.compile(
    rb"(?i:\b\d+\s*x\s*A100\b|\bA100\b[^\n]{0,24}?\b(?:40|80)\s*GB\b|\b(?:40|80)\s*GB\s+A100\b)"
)


def sku_calibrated_batch(hit: Hit) -> None:
    """MEM004 (shared with shell and YAML): a batch size in a file that cites one SKU."""
    if _SKU_CITATION.search(hit.scanner.data):
        hit.emit("MEM004")
