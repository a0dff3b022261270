"""Token patterns that more than one language's rules use, and a bracket splitter for
template and call arguments (which also works inside unparsed #define bodies)."""

import re

# MEM001: 40 or 80 GB written out (80 * 1024**3, 80 << 30, 80e9, 80_000_000_000).
_GB = rb"(?:40|80)(?:[uU]?[lL]{0,2})?"
HBM_BYTES = (
    rb"\b" + _GB + rb"\s*\*\s*(?:1024\s*\*\*\s*3|\(\s*1\s*<<\s*30\s*\)|2\s*\*\*\s*30|"
    rb"1024\s*\*\s*1024\s*\*\s*1024|1024(?:[uU]?[lL]{0,2})?\s*\*\s*1024\s*\*\s*1024|1e9|"
    rb"10\s*\*\*\s*9|\(\s*1024\s*\*\*\s*3\s*\))|\b" + _GB + rb"\s*<<\s*30\b|"
    rb"\b(?:40|80)(?:\.0)?e\+?9\b|\b(?:40|80)_?000_?000_?000\b"
)
HBM_STRING = rb"[\"'](?:40|80)\s?Gi?B[\"']"
# MEM002: A100/H100 peak FLOP/s and HBM bandwidth as literals.
PEAK_THROUGHPUT = (
    rb"(?:(?:312|156|19\.5|989|989\.5|1979|2\.0)(?:e\+?12|\s*\*\s*1e12|"
    rb"\s*\*\s*10\s*\*\*\s*12)|(?:1555|2039|3350)(?:e\+?9|\s*\*\s*1e9|\s*\*\s*10\s*\*\*\s*9)|"
    rb"3\.35e\+?12)(?![\w.])"
)
# MEM003: shared memory per block/SM and L2 sizes of A100/H100.
ON_CHIP_BYTES = (
    rb"\b(?:48|96|99|100|163|164|227|228)\s*\*\s*1024\b(?!\s*\*)|"
    rb"\b(?:40|50)\s*\*\s*1024\s*\*\s*1024\b(?!\s*\*)"
)
# MEM005: NVIDIA product names that code keys behaviour on.
SKU_NAME = rb"\b(?:A100|H100|H200|H800|A800|V100|GH200|GB200|B200|B100|A10G|L40S)\b"
# MEM006: A100 / H100 SXM streaming-multiprocessor counts.
SM_COUNT = rb"\b(?:108|132)\b"
SM_COUNT_CONTEXT = re.compile(
    rb"(?i:grid|blocks?\b|num_?sms?\b|sm_?count|multiprocessor|ctas?\b|waves?\b|occupancy|"
    rb"dim3|persistent)"
)
# PREC005: tolerances and loss-scale constants.
TOLERANCE = rb"\b(?:atol|rtol|tol|tolerance|rel_tol|abs_tol|loss_scale|init_scale)\s*=\s*[\d.]"
TF32_NEARBY = re.compile(rb"tf32|TF32|A100")
TOLERANCE_RADIUS_LINES = 3

# Files that talk about GPUs at all: plain numbers (80 * 1024**3, 48 * 1024, 108, atol=1e-2) are
# findings only there; in an HTTP client they are buffer sizes.
GPU_CONTEXT = re.compile(
    rb"cuda|CUDA|torch|triton|gpu|GPU|nvidia|NVIDIA|cupy|jax|threadIdx|A100|H100|V100"
)
# ARCH002: a name that holds a compute capability compared with a number: `major >= 8`,
# `capability < (8, 0)`, `device_capability >= 80`, in Python and C/C++ alike.
CAPABILITY_COMPARISON = (
    rb"\b(?:major|minor|cc_major|cc_minor|sm_major|sm_minor|compute_capability|"
    rb"capability|device_capability|sm_version|sm_arch)\s*(?:>=|<=|==|!=|>|<)\s*"
    rb"[(\[]?\s*\d"
)
CAPABILITY_NEEDLES = (b"major", b"minor", b"capability", b"sm_version", b"sm_arch")
# Where a `major >= 8` can come from a compute capability rather than a version number.
CAPABILITY_SOURCE = re.compile(rb"[Cc]apabilit|DeviceProp|device_prop|ComputeCapability")

# The characters that matter when splitting arguments; everything else is skipped in C.
_ANGLE_TOKENS = re.compile(rb"[(<\[{)>\]},\"']")  # template arguments nest in <>
_PAREN_TOKENS = re.compile(rb"[(\[{)\]},\"']")  # call arguments may hold a < b
_OPENING = frozenset(b"(<[{")
_COMMA, _QUOTES = ord(","), frozenset(b"\"'")


def split_arguments(data: bytes, open_index: int, limit_bytes: int = 2000) -> list[bytes] | None:
    """The top-level, comma-separated arguments after the bracket at open_index, stripped;
    None when the bracket does not close within limit_bytes."""
    tokens = _ANGLE_TOKENS if data[open_index : open_index + 1] == b"<" else _PAREN_TOKENS
    end = min(len(data), open_index + limit_bytes)
    depth = 0
    arguments: list[bytes] = []
    start = open_index + 1
    index = open_index
    while (token := tokens.search(data, index, end)) is not None:
        index = token.start()
        char = data[index]
        if char in _QUOTES:
            closing = data.find(data[index : index + 1], index + 1, end)
            if closing == -1:
                return None
            index = closing
        elif char in _OPENING:
            depth += 1
        elif char == _COMMA:
            if depth == 1:
                arguments.append(data[start:index].strip())
                start = index + 1
        else:
            depth -= 1
            if depth == 0:
                arguments.append(data[start:index].strip())
                return arguments
        index += 1
    return None


# DEP002: requirement names and pins of NVIDIA-only wheels.
WHEEL_PINS = (
    rb"(?<![\w-])(?i:flash[-_]attn|xformers|bitsandbytes|cupy-cuda\w*|pycuda|nvidia-[\w-]*-cu\d+|"
    rb"nvidia-ml-py\d?|tensorrt[\w-]*|transformer[-_]engine[\w-]*|flashinfer[\w-]*|"
    rb"nvidia-cutlass-dsl)(?![\w-])|\+cu1\d{1,2}\b|download\.pytorch\.org/whl/cu1\d+"
)

_NUMBERS_AND_TYPES = re.compile(
    rb"\b\d[\w.]*|\b(?:size_t|sizeof|u?int\d*_t|long|unsigned|int|float|double|static_cast)\b"
)
_IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")


def has_identifier(expression: bytes) -> bool:
    """Whether an expression names a variable (numbers, 1e9 and C casts do not count)."""
    return bool(_IDENTIFIER.search(_NUMBERS_AND_TYPES.sub(b"", expression)))


# Substrings that every match of the pattern above them contains (see detect.Detector.needles).
PEAK_THROUGHPUT_NEEDLES = (
    b"312", b"156", b"19.5", b"989", b"1979", b"2.0", b"1555", b"2039", b"3350", b"3.35",
)  # fmt: skip
SKU_NAME_NEEDLES = (b"100", b"200", b"800", b"A10G", b"L40S")
SM_COUNT_NEEDLES = (b"108", b"132")
# Requirement names are matched in any case; setup.py spells them in lower case or as below.
WHEEL_PIN_NEEDLES = (
    b"flash", b"Flash", b"xformers", b"bitsandbytes", b"cupy", b"pycuda", b"nvidia", b"tensorrt",
    b"TensorRT", b"transformer", b"Transformer", b"flashinfer", b"+cu", b"whl/cu",
)  # fmt: skip
