"""Number formats: bytes per value, and which datasheet figure gives their compute peak."""

from enum import StrEnum


class Dtype(StrEnum):
    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"


BYTES_PER_VALUE = {
    Dtype.FP32: 4.0,
    Dtype.BF16: 2.0,
    Dtype.FP16: 2.0,
    Dtype.FP8: 1.0,
    Dtype.INT8: 1.0,
    Dtype.INT4: 0.5,
}

# Group-wise INT4 (GPTQ / AWQ, group size 128) stores a 16-bit scale and a 4-bit zero point per
# 128 weights: (16 + 4) / 128 bits more per weight.
INT4_GROUP_SIZE = 128
INT4_OVERHEAD_BITS = (16 + 4) / INT4_GROUP_SIZE
# QLoRA's NF4 with double quantisation: 4 bits + 0.127 bits of constants per weight
# (Dettmers et al. 2023, section 3).
NF4_BITS_PER_PARAM = 4 + 0.127


def weight_bytes_per_param(dtype: Dtype) -> float:
    """Bytes per quantised linear-layer weight, including quantisation constants."""
    if dtype is Dtype.INT4:
        return (4 + INT4_OVERHEAD_BITS) / 8
    return BYTES_PER_VALUE[dtype]


def is_quantised(dtype: Dtype) -> bool:
    """Quantised formats keep embeddings, the output head and norms in 16-bit."""
    return dtype in {Dtype.FP8, Dtype.INT8, Dtype.INT4}
