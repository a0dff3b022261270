"""C/C++/CUDA TC rules (hand-tiled MMA, CuTe atoms, CUTLASS configs, literal tiles, Ampere
pipelines) and PREC003 (TF32 as a compile-time type), plus the library GEMMs the scorecard
counts."""

import re

from advisor.domain.portability.rules import RE_TUNE, REWRITE_RISK
from jobs.domain.codescan import patterns
from jobs.domain.codescan.common import emit_rule, evidence
from jobs.domain.codescan.cxx.syntax import in_kernel_body, runtime_selected
from jobs.domain.codescan.detect import Detector, Hit
from jobs.domain.codescan.kinds import Kind
from jobs.domain.codescan.syntax import Node, ancestors, text_of

KERNEL_BODY = "inside a kernel body"


def _template_parameters(node: Node | None) -> set[bytes]:
    """Names declared by the template<...> heads around the node."""
    names: set[bytes] = set()
    for current in ancestors(node):
        if current.type == "template_declaration":
            parameters = current.child_by_field_name("parameters")
            names.update(re.findall(rb"\b(\w+)\s*(?:=[^,>]*)?(?=[,>])", text_of(parameters)))
    return names


_LITERAL_SHAPE = re.compile(rb"\d+[uU]?|_\d+|Int<[\d\s*+]+>")


def _tc001(hit: Hit) -> None:
    arguments = patterns.split_arguments(hit.scanner.data, hit.end - 1)
    if arguments is None or len(arguments) < 4:
        return
    parameters = _template_parameters(hit.node)
    if any(shape not in parameters for shape in arguments[1:4]):
        hit.emit("TC001")


_IMPLICIT_TF32 = (
    re.compile(rb"\bfloat\b"),
    re.compile(rb"\bSm80\b"),
    re.compile(rb"GemmShape\s*<\s*16\s*,\s*8\s*,\s*8\s*>"),
)
_IMPLICIT_TF32_RADIUS_LINES = 15


def _tensor_op_class(hit: Hit) -> None:
    hit.emit("TC004")
    # A float GEMM on tensor cores of sm80 with 16x8x8 instructions is TF32 without saying so.
    window = hit.scanner.source.lines_around(hit.start, _IMPLICIT_TF32_RADIUS_LINES)
    if all(pattern.search(window) for pattern in _IMPLICIT_TF32):
        hit.emit("PREC003")


def _tile_severity(hit: Hit) -> dict[str, str]:
    if in_kernel_body(hit.node):
        return {"severity": REWRITE_RISK, "context": KERNEL_BODY}
    return {}


def _literal_tiles(hit: Hit) -> None:
    if hit.scanner.kind is not Kind.CUDA:
        return
    arguments = patterns.split_arguments(hit.scanner.data, hit.end - 1)
    if arguments and sum(bool(_LITERAL_SHAPE.fullmatch(a)) for a in arguments) >= 2:
        hit.emit("TC005", **_tile_severity(hit))


def _tile_knob(hit: Hit) -> None:
    if hit.scanner.kind is Kind.CUDA:
        hit.emit("TC005", **_tile_severity(hit))


def _compile_time_tf32(hit: Hit) -> None:
    if runtime_selected(hit.node):
        hit.emit("PREC003", severity=RE_TUNE, context="selected at run time")
    else:
        hit.emit("PREC003")


DETECTORS = [
    Detector("tc001", rb"\bwmma\s*::\s*fragment\s*<", _tc001, needles=(b"wmma",)),
    Detector("tc003", rb"\bSM\d{2,3}_[A-Za-z0-9_]+", emit_rule("TC003"), needles=(b"SM",)),
    Detector("tc004_op", rb"\bOpClassTensorOp\b", _tensor_op_class, needles=(b"OpClassTensorOp",)),
    Detector(
        "tc004",
        rb"\bcutlass\s*::\s*(?:arch\s*::\s*Sm\d+\b|gemm\s*::\s*GemmShape\s*<)",
        emit_rule("TC004"),
        needles=(b"cutlass",),
    ),
    Detector("tc005_traits", rb"[Kk]ernel_?[Tt]raits\w*\s*<", _literal_tiles, needles=(b"ernel",)),
    Detector(
        "tc005_cute",
        rb"\b(?:Tile|Shape|TileShape)\s*<",
        _literal_tiles,
        needles=(b"Tile", b"Shape"),
    ),
    Detector(
        "tc005_define",
        rb"^[ \t]*#[ \t]*define[ \t]+(?:[MNK]|TILE_\w*|BLOCK_(?:SIZE_)?[MNK]|B[MNK]|W[MNK]|"
        rb"T[MNK]|WMMA_[MNK]|MMA_[MNK]|kBlock[MNK]|kTile[MNK]\w*|kNWarps)"
        rb"[ \t]+\(?\d+\)?[ \t]*$",
        _tile_knob,
        needles=(b"define",),
    ),
    Detector(
        "tc005_constexpr",
        rb"\bconstexpr\s+(?:static\s+)?(?:int|unsigned|int32_t|uint32_t|size_t|index_t|auto)"
        rb"\s+(?:kBlock[MNK]|kTile[MNK]\w*|kNWarps|BLOCK_[MNK]|TILE_[MNK])\s*=\s*\d+\b",
        _tile_knob,
        needles=(b"constexpr",),
    ),
    Detector(
        "tc006",
        rb"#[ \t]*include[ \t]*<cuda/(?:pipeline|barrier)>|"
        rb"\b(?:cuda|cg|cooperative_groups)\s*::\s*memcpy_async\b|\b__pipeline_memcpy_async\b",
        emit_rule("TC006"),
        needles=(b"cuda/", b"memcpy_async"),
    ),
    Detector(
        "prec003",
        rb"\b(?:CUBLAS_COMPUTE_32F_FAST_TF32|CUBLAS_TF32_TENSOR_OP_MATH|__float_to_tf32|"
        rb"tfloat32_t)\b|\bprecision\s*::\s*tf32\b",
        _compile_time_tf32,
        needles=(b"TF32", b"tf32", b"tfloat32"),
    ),
    Detector(
        "ev_gemm",
        rb"\b(?:cublas\w*[Gg]emm\w*|cublasLtMatmul\w*|hipblas\w*[Gg]emm\w*|hipblasLt\w*|"
        rb"rocblas_\w*gemm\w*|at::(?:matmul|mm|bmm|addmm|linear)|torch::(?:matmul|mm|bmm))\b",
        evidence("TC"),
        gpu_only=True,
        needles=(b"cublas", b"hipblas", b"rocblas", b"at::", b"torch::"),
    ),
]
