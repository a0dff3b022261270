"""Python DEV rules: device strings, .cuda(), the torch.cuda namespace (which also routes
torch.cuda.amp to DEV004, torch.cuda.nvtx to TOOL003 and torch.cuda.nccl to COMM005), cuDNN knobs,
CUDA_VISIBLE_DEVICES."""

import re

from jobs.domain.codescan.candidates import NCCL_DIRECT
from jobs.domain.codescan.common import emit_rule
from jobs.domain.codescan.detect import IN_CODE_OR_STRING, IN_STRING, Detector, Hit
from jobs.domain.codescan.python.syntax import (
    TRANSPARENT,
    callee,
    climb,
    enclosing,
    in_message_call,
    knob_assignment,
    string_at,
    string_value,
)
from jobs.domain.codescan.syntax import Node, text_of

_TORCH_CUDA_ATTRIBUTE = re.compile(rb"\s*\.\s*([A-Za-z_]\w*)(\s*\()?")
_NAMESPACED = {b"amp": "DEV004", b"nvtx": "TOOL003", b"nccl": "COMM005"}


def _torch_cuda(hit: Hit) -> None:
    statement = enclosing(hit.node, "import_statement", "import_from_statement")
    if statement is not None:
        _torch_cuda_import(hit, statement)
        return
    attribute = _TORCH_CUDA_ATTRIBUTE.match(hit.scanner.data, hit.end)
    if attribute is None:
        return
    name, called = attribute.group(1), attribute.group(2)
    if name == b"is_available":
        if called:
            hit.emit("DEV005")
    else:
        _emit_namespaced(hit, name)


def _emit_namespaced(hit: Hit, name: bytes) -> None:
    rule_id = _NAMESPACED.get(name, "DEV003")
    hit.emit(rule_id, tags=frozenset({NCCL_DIRECT}) if rule_id == "COMM005" else frozenset())


def _torch_cuda_import(hit: Hit, statement: Node) -> None:
    """`from torch.cuda.amp import autocast`, `from torch.cuda import nccl, Stream`."""
    if statement.type == "import_statement":
        attribute = _TORCH_CUDA_ATTRIBUTE.match(hit.scanner.data, hit.end)
        if attribute is not None:
            _emit_namespaced(hit, attribute.group(1))
        return
    module = text_of(statement.child_by_field_name("module_name"))
    submodule = module.split(b".")[2] if module.count(b".") >= 2 else None
    if submodule is not None:
        _emit_namespaced(hit, submodule)
        return
    for name in statement.children_by_field_name("name"):
        imported = text_of(name).split(b" ")[0]
        if imported != b"is_available":
            _emit_namespaced(hit, imported)


_DEVICE_STRING = re.compile(rb"cuda(?::\d+|:\{[^}]*\})?")
_DEVICE_NAME = re.compile(rb"(?i)(?:^|_)device(?:_type)?$|^dev$|^map_location$")
_DEVICE_CALL = re.compile(rb"(?:^|\.)(?:device|to)$")


def _device_string(hit: Hit) -> None:
    string = string_at(hit)
    if string is None or not _DEVICE_STRING.fullmatch(string_value(string)):
        return
    top = climb(string, *TRANSPARENT)
    parent = top.parent
    if parent is None or parent.type in ("comparison_operator", "case_pattern"):
        return  # `device_type == "cuda"` is a guard, not a lock
    if parent.type in ("keyword_argument", "default_parameter", "typed_default_parameter"):
        hardwired = _DEVICE_NAME.search(text_of(parent.child_by_field_name("name")))
    elif parent.type == "argument_list":
        call = parent.parent
        hardwired = call is not None and _DEVICE_CALL.search(callee(call))
    elif parent.type == "assignment":
        target = parent.child_by_field_name("left")
        if target is not None and target.type == "attribute":
            target = target.child_by_field_name("attribute")
        hardwired = _DEVICE_NAME.search(text_of(target))
    elif parent.type == "pair":
        hardwired = _DEVICE_NAME.search(string_value(parent.child_by_field_name("key") or top))
    else:
        hardwired = None
    if hardwired:
        hit.emit("DEV001")


def _cudnn_knob(hit: Hit) -> None:
    if knob_assignment(hit) is not None:
        hit.emit("DEV007")


def _visible_devices(hit: Hit) -> None:
    if not in_message_call(hit.node):
        hit.emit("DEV006")


DETECTORS = [
    Detector("torch_cuda", rb"\btorch\s*\.\s*cuda\b", _torch_cuda, needles=(b"cuda",)),
    Detector("dev002", rb"\.\s*cuda\s*\(", emit_rule("DEV002"), needles=(b"cuda",)),
    Detector(
        "dev001",
        rb"[bBrRuUfF]{0,2}[\"']cuda(?::\d+|:\{[^}\"'\n]*\})?[\"']",
        _device_string,
        IN_STRING,
        needles=(b"cuda",),
    ),
    Detector(
        "dev001_int",
        rb"\.\s*to\s*\(\s*\d+\s*[,)]",
        emit_rule("DEV001"),
        gpu_only=True,
        needles=(b"to",),
    ),
    Detector(
        "dev007",
        rb"\bcudnn\s*\.\s*(?:benchmark|deterministic)\b",
        _cudnn_knob,
        needles=(b"cudnn",),
    ),
    Detector(
        "dev006",
        rb"\bCUDA_VISIBLE_DEVICES\b",
        _visible_devices,
        IN_CODE_OR_STRING,
        needles=(b"CUDA_VISIBLE_DEVICES",),
    ),
]
