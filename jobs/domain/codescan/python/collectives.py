"""Python COMM rules: hard-wired backends, NVLink assumptions, fabric environment,
NCCL bindings, the 8-GPU island; plus the portable collectives the scorecard counts."""

import re

from jobs.domain.codescan.candidates import NCCL_DIRECT
from jobs.domain.codescan.common import eight_gpu_island, emit_nvlink, evidence
from jobs.domain.codescan.detect import IN_CODE_OR_STRING, IN_STRING, Detector, Hit
from jobs.domain.codescan.python.precision import vendor_version_gate
from jobs.domain.codescan.python.syntax import (
    TRANSPARENT,
    assigned_name,
    callee,
    climb,
    enclosing,
    looks_configured,
    scope_of,
    string_at,
)
from jobs.domain.codescan.syntax import Node, ancestors, text_of


def _nccl_python(hit: Hit) -> None:
    probe = hit.text.startswith((b"nccl", b"is_nccl_available"))
    hit.emit("COMM005", tags=frozenset() if probe else frozenset({NCCL_DIRECT}))
    if hit.text.startswith(b"nccl"):
        vendor_version_gate(hit)


_GROUP_CALLS = re.compile(
    rb"(?:^|\.)(?:init_process_group|new_group|new_subgroups\w*|init_device_mesh|"
    rb"init_distributed)$"
)
_BACKEND_NAME = re.compile(rb"(?i)backend")


def _nccl_backend(hit: Hit) -> None:
    string = string_at(hit)
    if string is None:
        return
    top = climb(string, *TRANSPARENT)
    parent = top.parent
    if parent is None:
        return
    if parent.type == "keyword_argument":
        call = enclosing(parent, "call")
        name = text_of(parent.child_by_field_name("name"))
        if call is not None and _BACKEND_NAME.search(name) and _GROUP_CALLS.search(callee(call)):
            hit.emit("COMM001")
    elif parent.type == "argument_list":
        call = parent.parent
        first = parent.named_children[0] if parent.named_children else None
        if call is not None and first == top and callee(call).endswith(b"init_process_group"):
            hit.emit("COMM001")
    elif (name := assigned_name(top)) is not None and _BACKEND_NAME.search(name):
        scope = text_of(scope_of(parent))
        if len(re.findall(rb"\b%s\s*(?::[^=\n]*)?=(?!=)" % re.escape(name), scope)) < 2:
            hit.emit("COMM001")  # never re-assigned (from configuration) in its scope


def _config_switch(node: Node | None) -> bytes | None:
    for current in ancestors(node):
        if current.type in ("if_statement", "elif_clause", "conditional_expression"):
            condition = current.child_by_field_name("condition")
            if condition is None and current.type == "conditional_expression":
                named = current.named_children
                condition = named[1] if len(named) > 1 else None
            if looks_configured(condition):
                return text_of(condition)
    return None


def _nvlink(hit: Hit) -> None:
    if enclosing(hit.node, "import_statement", "import_from_statement") is not None:
        return  # the call sites report it
    emit_nvlink(hit, _config_switch(hit.node))


_ENVIRON_CALL = re.compile(
    rb"(?:^|\.)(?:getenv|putenv|unsetenv|environ\.get|environ\.setdefault|environ\.pop)$"
)


def _environment_access(string: Node) -> bool:
    """The string names an environment variable: os.environ[...], getenv(...), env dicts."""
    parent = climb(string, *TRANSPARENT).parent
    if parent is None:
        return False
    if parent.type == "subscript":
        return text_of(parent.child_by_field_name("value")).endswith(b"environ")
    if parent.type == "argument_list" and parent.parent is not None:
        return bool(_ENVIRON_CALL.search(callee(parent.parent)))
    if parent.type == "pair":
        holder = climb(parent.parent or parent, "dictionary").parent
        return holder is not None and b"env" in text_of(holder)[:40].lower()
    return False


def _fabric_env(hit: Hit) -> None:
    string = string_at(hit)
    if string is not None and _environment_access(string):
        hit.emit("COMM004")


DETECTORS = [
    Detector(
        "comm005",
        rb"\b(?:is_nccl_available|ProcessGroupNCCL|pynccl|PyNcclCommunicator)\b|"
        rb"\bnccl\s*\.\s*version\s*\(",
        _nccl_python,
        needles=(b"nccl", b"NCCL", b"Nccl"),
    ),
    Detector("comm001", rb"[\"']nccl[\"']", _nccl_backend, IN_STRING, needles=(b"nccl",)),
    Detector(
        "comm003",
        rb"\b(?:is_full_nvlink|can_device_access_peer|nvmlDeviceGetNvLink\w*|multimem_\w+|"
        rb"cudaIpc\w*MemHandle\w*)\b|nvidia-smi(?:\s+|[\"']\s*,\s*[\"'])topo\b",
        _nvlink,
        IN_CODE_OR_STRING,
        needles=(b"nvlink", b"NvLink", b"access_peer", b"multimem_", b"MemHandle", b"topo"),
    ),
    Detector(
        "comm004",
        rb"[\"'](?:TORCH_NCCL_\w+|NCCL_\w+|NVSHMEM_\w+|CUDA_DEVICE_MAX_CONNECTIONS)[\"']",
        _fabric_env,
        IN_STRING,
        needles=(b"NCCL_", b"NVSHMEM_", b"CUDA_DEVICE_MAX_CONNECTIONS"),
    ),
    Detector(
        "comm006",
        rb"(?:\btensor_model_parallel_size|\btensor_parallel_size|\btp_size|\bTP_SIZE|\bTP)"
        rb"\s*[=:]\s*8\b",
        eight_gpu_island,
        gpu_only=True,
        needles=(b"TP", b"tp_size", b"parallel_size"),
    ),
    Detector(
        "ev_collectives",
        rb"\b(?:dist|torch\s*\.\s*distributed)\s*\.\s*(?:all_reduce|all_gather\w*|"
        rb"reduce_scatter\w*|broadcast|all_to_all\w*|barrier)\b|\bdeepspeed\s*\.\s*comm\b|"
        rb"\bget_default_backend_for_device\b|\bcommunication_backend_name\b",
        evidence("COMM"),
        gpu_only=True,
        needles=(
            b"dist",
            b"deepspeed",
            b"get_default_backend_for_device",
            b"communication_backend_name",
        ),
    ),
]
