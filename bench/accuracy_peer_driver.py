"""The peer tools on the calibration rows, run by bench/accuracy.py inside `.venv-peers/`.

Reads a JSON list of tasks on stdin (one per row: the figure asked, the row's input, the
model's Hugging Face config, its parameter counts and the GPU's catalogue figures) and prints
one JSON object: per row id, each peer's number for that figure, or null and the reason it
cannot answer. It imports only the peers (llm-analysis, accelerate with transformers,
DeepSpeed), never the project: the project's virtualenv does not have them.

Peer settings: llm-analysis with the efficiencies its README recommends (flops 0.5 for
training and 0.7 for inference, HBM 0.9: https://github.com/cli99/llm-analysis); accelerate's
`estimate-memory` arithmetic (`calculate_maximum_sizes` on the model built on the meta device
from the local config, then `estimate_training_usage`); DeepSpeed's ZeRO-2 and ZeRO-3
model-state estimators without offload.
"""

import contextlib
import io
import json
import logging
import sys

GIB = 2**30
LLM_ANALYSIS_EFFICIENCY = {"training": 0.5, "inference": 0.7, "hbm": 0.9}
DTYPE_BITS = {"fp32": 32, "bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "int4": 4}
ACCELERATE_DTYPE = {
    "fp32": "float32",
    "bf16": "float16",
    "fp16": "float16",
    "int8": "int8",
    "int4": "int4",
}
ACCELERATE_DIVISOR = {"float32": 1, "float16": 2, "int8": 4, "int4": 8}


class CannotAnswer(Exception):
    """The peer has no estimate for this figure at this input (the message says why)."""


def _model_config(task: dict):
    from llm_analysis.config import ModelConfig

    config = task["config"]
    if config is None:
        raise CannotAnswer("needs a model config (the row gives a bare parameter count)")
    hidden = config["hidden_size"]
    ffn = config.get("intermediate_size") or 4 * hidden
    return ModelConfig(
        name=task["input"].get("model", "model"),
        num_layers=config["num_hidden_layers"],
        n_head=config["num_attention_heads"],
        hidden_dim=hidden,
        vocab_size=config["vocab_size"],
        max_seq_len=config.get("max_position_embeddings"),
        num_key_value_heads=config.get("num_key_value_heads"),
        ffn_embed_dim=ffn,
        # Given, so that ModelConfig does not insist on a whole-number ratio (Llama's 3.5).
        expansion_ratio=ffn / hidden,
        model_type=config.get("model_type"),
    )


def _gpu_config(device: dict):
    from llm_analysis.config import GPUConfig

    return GPUConfig(
        name=device["key"],
        mem_per_GPU_in_GB=device["memory_gib"] * GIB / 1e9,
        hbm_bandwidth_in_GB_per_sec=device["bandwidth_gb_s"],
        intra_node_bandwidth_in_GB_per_sec=device["interconnect_gb_s"] or 32.0,
        intra_node_min_message_latency=8e-06,
        peak_fp16_TFLOPS=device["bf16_tflops"],
    )


def llm_analysis(task: dict) -> float:
    from llm_analysis.analysis import LLMAnalysis
    from llm_analysis.config import DtypeConfig, ParallelismConfig

    given, quantity = task["input"], task["quantity"]
    if given["task"] in {"lora", "qlora"}:
        raise CannotAnswer("has no adapter (LoRA/QLoRA) training")
    if quantity.startswith("kv_cache"):
        raise CannotAnswer("does not size a KV pool from the memory left free")
    count = given["gpu_count"]
    trains = given["task"] != "inference"
    bits = DTYPE_BITS[given.get("weight_dtype", "bf16")]
    analysis = LLMAnalysis(
        _model_config(task),
        _gpu_config(task["device"]),
        DtypeConfig(weight_bits=bits, activation_bits=16 if bits < 16 else bits),
        ParallelismConfig(tp_size=1 if trains else count, dp_size=count if trains else 1),
        flops_efficiency=LLM_ANALYSIS_EFFICIENCY["training" if trains else "inference"],
        hbm_memory_efficiency=LLM_ANALYSIS_EFFICIENCY["hbm"],
    )
    if not trains:
        kv_dtype = given.get("kv_dtype") or given.get("weight_dtype", "bf16")
        try:
            summary = analysis.inference(
                batch_size_per_gpu=given.get("batch_size", 1),
                seq_len=given["context_tokens"] - given.get("output_tokens", 0),
                num_tokens_to_generate=max(given.get("output_tokens", 0), 1),
                kv_cache_dtype_bytes=max(DTYPE_BITS[kv_dtype] // 8, 1),
            )
        except AssertionError as error:
            if "too large to fit" in str(error):
                raise CannotAnswer(
                    "refuses the batch: by its own count the KV cache and activations do not fit"
                ) from error
            raise
        if quantity == "weights_gib_per_gpu":
            return summary["weight_memory_per_gpu"] / GIB
        if quantity == "decode_tokens_per_s_per_sequence":
            return summary["decode_tokens_per_sec"] / given.get("batch_size", 1)
        if quantity == "serving_output_tokens_per_s_per_gpu":
            return summary["total_tokens_per_sec"] / count
        if quantity == "time_to_first_token_ms":
            return summary["prefill_latency"] * 1000
        raise CannotAnswer("has no activation-peak or non-torch memory figure for serving")
    from llm_analysis.analysis import ActivationRecomputation, DSZeRO

    summary = analysis.training(
        batch_size_per_gpu=given["batch_size"],
        global_batch_size=given["batch_size"] * count,
        seq_len=given["context_tokens"],
        total_num_tokens=given.get("train_tokens")
        or given["batch_size"] * count * given["context_tokens"],
        activation_recomputation=(
            ActivationRecomputation.FULL
            if given.get("gradient_checkpointing")
            else ActivationRecomputation.NONE
        ),
        ds_zero=DSZeRO(given.get("zero_stage") or 0),
        mlp_gated_linear_units=task["config"].get("hidden_act", "") in {"silu", "swiglu"},
    )
    seconds_per_token = summary["latency_per_iter"] / (
        given["batch_size"] * count * given["context_tokens"]
    )
    if quantity == "peak_memory_gib_per_gpu":
        return (
            sum(
                summary[key]
                for key in (
                    "weight_memory_per_gpu",
                    "gradient_memory_per_gpu",
                    "optimizer_state_memory_per_gpu",
                    "activation_memory_per_gpu",
                )
            )
            / GIB
        )
    if quantity == "training_tokens_per_s":
        return 1 / seconds_per_token
    if quantity == "training_tokens_per_s_per_gpu":
        return 1 / seconds_per_token / count
    if quantity == "gpu_hours":
        return summary["total_training_latency"] * count / 3600
    raise CannotAnswer(f"no training figure for {quantity}")


def accelerate(task: dict) -> float:
    given, quantity = task["input"], task["quantity"]
    if task["config"] is None:
        raise CannotAnswer("needs a model config (the row gives a bare parameter count)")
    if given["gpu_count"] > 1:
        raise CannotAnswer("sizes the whole model on one device, not a share per GPU")
    dtype = given.get("weight_dtype", "bf16")
    if quantity == "weights_gib_per_gpu":
        if dtype not in ACCELERATE_DTYPE:
            raise CannotAnswer(f"estimate-memory has no {dtype} weights")
        name = ACCELERATE_DTYPE[dtype]
        return _accelerate_fp32_bytes(task["config"]) / ACCELERATE_DIVISOR[name] / GIB
    if quantity == "peak_memory_gib_per_gpu":
        if given["task"] not in {"full", "pretrain"}:
            raise CannotAnswer("estimate-memory has no adapter (LoRA/QLoRA) training")
        from accelerate.commands.estimate import estimate_training_usage

        usage = estimate_training_usage(_accelerate_fp32_bytes(task["config"]), "bfloat16")
        return max(usage.values()) / GIB
    raise CannotAnswer("estimate-memory gives the weights and full-training (Adam) memory only")


def _accelerate_fp32_bytes(config: dict) -> int:
    import torch
    import transformers
    from accelerate import init_empty_weights
    from accelerate.utils import calculate_maximum_sizes

    hf_config = transformers.AutoConfig.for_model(**config)
    with init_empty_weights():
        model = transformers.AutoModelForCausalLM.from_config(hf_config, dtype=torch.float32)
    total_bytes, _ = calculate_maximum_sizes(model)
    return total_bytes


def deepspeed(task: dict) -> float:
    given = task["input"]
    stage = given.get("zero_stage")
    if task["quantity"] != "model_states_gb_per_gpu":
        raise CannotAnswer("estimates model states only (no activations, no runtime)")
    if stage == 2:
        from deepspeed.runtime.zero.stage_1_and_2 import estimate_zero2_model_states_mem_needs

        _, gpu_bytes = estimate_zero2_model_states_mem_needs(
            task["params_total"], num_gpus_per_node=given["gpu_count"], cpu_offload=False
        )
        return gpu_bytes / 1e9
    if stage == 3:
        from deepspeed.runtime.zero.stage3 import estimate_zero3_model_states_mem_needs

        _, gpu_bytes, _ = estimate_zero3_model_states_mem_needs(
            task["params_total"],
            task["largest_layer_params"],
            num_gpus_per_node=given["gpu_count"],
            cpu_offload=False,
            cpu_offload_params=False,
        )
        return gpu_bytes / 1e9
    raise CannotAnswer("has estimators for ZeRO-2 and ZeRO-3 only")


PEERS = {"llm_analysis": llm_analysis, "accelerate": accelerate, "deepspeed": deepspeed}
# Figures published in another unit than the one the peers are asked in: (asked as, factor).
SAME_FIGURE_IN = {
    "peak_memory_mib_per_gpu": ("peak_memory_gib_per_gpu", 1024),
    "peak_memory_gb_per_gpu": ("peak_memory_gib_per_gpu", GIB / 1e9),
}


def versions() -> dict:
    from importlib.metadata import version

    packages = ("llm-analysis", "accelerate", "transformers", "deepspeed", "torch")
    return {name: version(name) for name in packages}


def main() -> None:
    logging.disable(logging.WARNING)
    tasks = json.load(sys.stdin)
    answers: dict[str, dict] = {}
    for task in tasks:
        answers[task["id"]] = {}
        asked, factor = SAME_FIGURE_IN.get(task["quantity"], (task["quantity"], 1))
        task = {**task, "quantity": asked}
        for name, peer in PEERS.items():
            # The peers print tables and progress; only this JSON goes to stdout.
            with contextlib.redirect_stdout(io.StringIO()):
                try:
                    value, why = peer(task) * factor, None
                except CannotAnswer as reason:
                    value, why = None, str(reason)
                except (
                    Exception
                ) as error:  # a peer's own failure is that cell's reason, not the run's
                    value, why = None, f"failed: {type(error).__name__}: {error}"[:300]
            answers[task["id"]][name] = {"value": value, "why": why}
    json.dump({"versions": versions(), "answers": answers}, sys.stdout)


if __name__ == "__main__":
    main()
