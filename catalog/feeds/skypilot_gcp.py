"""GCP's `vms.csv`: host VMs, GPUs and TPUs are priced in separate rows; an offer is what
SkyPilot would launch, priced as SkyPilot prices it
(https://github.com/skypilot-org/skypilot/blob/master/sky/catalog/gcp_catalog.py):

- A GPU bound to its own machine family (A100 on a2, H100 on a3, H200 on a3-ultra, B200 on a4,
  L4 on g2) is the host VM's row plus the GPU row of the same zone.
- T4, V100, P100 and P4 attach to an n1 VM: SkyPilot takes the cheapest `n1-standard`,
  `n1-highmem` or `n1-highcpu` VM of the zone with at least its default vCPUs for that GPU
  count and 4 GiB of memory per vCPU; the offer is `<n1 type> + <count>x <GPU>` at the sum of
  both rows. Where the file holds no such n1 row for the zone, the GPU row is skipped with that
  reason rather than priced without its host.
- A TPU row is the whole price (SkyPilot: "the host VM of TPU does not cost extra"); its name
  `tpu-<version>-<size>` becomes the accelerator `tpu-<version>` times its chip count.
"""

import re
from collections import defaultdict
from decimal import Decimal

from catalog.domain.quotes import PAY_AS_YOU_GO, PricingModel
from catalog.feeds.skypilot_rows import (
    CPU_ONLY,
    Instance,
    ParsedFeed,
    Prices,
    Row,
    gpu_info,
    price_or_reason,
    quotes_for,
    row_prices,
    skip,
)

# SkyPilot's _ACC_INSTANCE_TYPE_DICTS: host VM -> (its GPU row's name, GPU count). a3-edgegpu
# (8x H100, https://cloud.google.com/compute/docs/gpus#a3-series) and the `-nolssd` variants
# (the same VMs without local SSD) are in the file but not in SkyPilot's table.
HOST_VM_GPUS: dict[str, tuple[str, int]] = {
    **{f"a2-highgpu-{n}g": ("A100", n) for n in (1, 2, 4, 8)},
    "a2-megagpu-16g": ("A100", 16),
    **{f"a2-ultragpu-{n}g": ("A100-80GB", n) for n in (1, 2, 4, 8)},
    **{f"a3-highgpu-{n}g": ("H100", n) for n in (1, 2, 4, 8)},
    "a3-edgegpu-8g": ("H100", 8),
    "a3-megagpu-8g": ("H100-MEGA", 8),
    "a3-ultragpu-8g": ("H200", 8),
    "a4-highgpu-8g": ("B200", 8),
    **{f"g2-standard-{n}": ("L4", 1) for n in (4, 8, 12, 16, 32)},
    "g2-standard-24": ("L4", 2),
    "g2-standard-48": ("L4", 4),
    "g2-standard-96": ("L4", 8),
}
NO_LOCAL_SSD_SUFFIX = "-nolssd"
HOST_BOUND_GPUS = {name for name, _ in HOST_VM_GPUS.values()}

# SkyPilot's _DEFAULT_HOST_VM_FAMILY, _NUM_ACC_TO_NUM_CPU and _DEFAULT_GPU_MEMORY_CPU_RATIO.
N1_HOST_FAMILIES = ("n1-standard-", "n1-highmem-", "n1-highcpu-")
N1_HOST_VCPUS_BY_GPU_COUNT = {
    "V100": {1: 8, 2: 16, 4: 32, 8: 64},
    "T4": {1: 4, 2: 8, 4: 48},
    "P100": {1: 8, 2: 16, 4: 32, 8: 64},
    "DEFAULT": {1: 8, 2: 16, 4: 32, 8: 64, 16: 128},
}
N1_HOST_MEMORY_GIB_PER_VCPU = 4

# TensorCores per chip: an accelerator type's size counts TensorCores for v2-v5p and chips for
# v5e and v6e. https://cloud.google.com/tpu/docs/v4 ("Each TPU v4 chip contains two
# TensorCores"), https://cloud.google.com/tpu/docs/v5p-training ("v5p-32 ... 32 TensorCores
# (16 chips)"), https://cloud.google.com/tpu/docs/v5e (v$VERSION-$CHIP_COUNT),
# https://docs.cloud.google.com/tpu/docs/v6e ("Each v6e chip contains one TensorCore"),
# https://cloud.google.com/tpu/docs/system-architecture-tpu-vm (v2 and v3: two per chip).
TPU_TENSORCORES_PER_CHIP = {"v2": 2, "v3": 2, "v4": 2, "v5p": 2, "v5litepod": 1, "v6e": 1}
_TPU = re.compile(r"^tpu-(?P<version>v[0-9a-z]+)-(?P<size>\d+)$")

HOST_WITHOUT_GPU_ROW = "GCP host VM without its GPU price row in this zone"
GPU_WITHOUT_HOST_ROW = "GCP GPU price row without its host VM row in this zone"
GPU_WITHOUT_N1_HOST = (
    "GCP GPU-only price row (T4/V100/P100/P4 need an n1 host VM, and the file has no n1 row "
    "for the zone): no whole-instance price"
)
N1_HOST_ROW = "GCP n1 VM row: no GPU of its own, the host T4/V100/P100/P4 rows are priced with"
UNKNOWN_TPU = "TPU version whose chip count per accelerator type is not known"
CONFLICTING_GPU_ROW = "GCP GPU price row repeated with other prices (the first is kept)"

GpuKey = tuple[str, int, str, str]  # accelerator, count, region, zone


def _sum(host: Prices, gpu: Prices) -> Prices:
    return {
        model: None if host[model] is None or gpu[model] is None else host[model] + gpu[model]
        for model in PAY_AS_YOU_GO
    }


def _prices(row: Row) -> Prices:
    return {
        PricingModel.ON_DEMAND: price_or_reason(row.get("Price"))[0],
        PricingModel.SPOT: price_or_reason(row.get("SpotPrice"))[0],
    }


def _host_gpus(instance_type: str) -> tuple[str, int] | None:
    return HOST_VM_GPUS.get(instance_type.removesuffix(NO_LOCAL_SSD_SUFFIX))


def _priced(
    provider: str, source: str, pair: tuple[Row, Row], instance: Instance, result: ParsedFeed
) -> None:
    """Quotes for a host + GPU pair. Without a price, the pair's first row is skipped (the
    host VM for a2/a3/a4/g2, the GPU row for n1 pairs: each row is skipped at most once)."""
    host, gpu = pair
    prices = _sum(_prices(host), _prices(gpu))
    if all(price is None for price in prices.values()):
        why_host = price_or_reason(host.get("Price"))[1] or "priced"
        why_gpu = price_or_reason(gpu.get("Price"))[1] or "priced"
        skip(
            result,
            provider,
            pair[0] if _host_gpus(host.get("InstanceType")) else gpu,
            "no price on the host VM or its GPU row",
            f"host line {host.line} {why_host}, GPU line {gpu.line} {why_gpu}",
        )
        return
    result.quotes.extend(quotes_for(provider, source, instance, prices))


def _tpu(provider: str, source: str, row: Row, result: ParsedFeed) -> None:
    name = row.get("AcceleratorName")
    match = _TPU.match(name)
    cores_per_chip = TPU_TENSORCORES_PER_CHIP.get(match["version"]) if match else None
    if match is None or cores_per_chip is None:
        skip(result, provider, row, UNKNOWN_TPU, name)
        return
    prices = row_prices(provider, row, result)
    if prices is None:
        return
    instance = Instance(
        instance_type=name,
        accelerator=f"tpu-{match['version']}",
        gpu_count=max(1, int(match["size"]) // cores_per_chip),
        region=row.get("Region"),
        zone=row.get("AvailabilityZone"),
        info={},
        vcpus=None,
        ram_gib=None,
        gpu_description=name,
    )
    result.quotes.extend(quotes_for(provider, source, instance, prices))


def _cheapest_n1_host(hosts: list[Row], accelerator: str, count: int) -> Row | None:
    needed = N1_HOST_VCPUS_BY_GPU_COUNT.get(accelerator, N1_HOST_VCPUS_BY_GPU_COUNT["DEFAULT"])
    vcpus = needed.get(count)
    if vcpus is None:
        return None
    fitting = [
        (price, host.line, host)
        for host in hosts
        if (host.decimal("vCPUs") or 0) >= vcpus
        and (host.decimal("MemoryGiB") or 0) >= vcpus * N1_HOST_MEMORY_GIB_PER_VCPU
        and (price := price_or_reason(host.get("Price"))[0]) is not None
    ]
    return min(fitting, key=lambda entry: entry[:2])[2] if fitting else None


def parse_gcp_rows(rows: list[Row], *, provider: str, source: str, result: ParsedFeed) -> None:
    hosts: list[Row] = []
    gpu_rows: dict[GpuKey, Row] = {}
    n1_hosts: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        instance_type, accelerator = row.get("InstanceType"), row.get("AcceleratorName")
        place = (row.get("Region"), row.get("AvailabilityZone"))
        if not instance_type and accelerator.startswith("tpu-"):
            _tpu(provider, source, row, result)
        elif not instance_type and accelerator:
            count = row.decimal("AcceleratorCount") or Decimal(0)
            key = (accelerator, int(count), *place)
            if key in gpu_rows:
                skip(result, provider, row, CONFLICTING_GPU_ROW, f"line {gpu_rows[key].line}")
            else:
                gpu_rows[key] = row
        elif _host_gpus(instance_type):
            hosts.append(row)
        elif instance_type.startswith(N1_HOST_FAMILIES):
            n1_hosts[place].append(row)
            skip(result, provider, row, N1_HOST_ROW)
        else:
            skip(result, provider, row, CPU_ONLY)

    used: set[GpuKey] = set()
    for host in hosts:
        accelerator, count = _host_gpus(host.get("InstanceType")) or ("", 0)
        key = (accelerator, count, host.get("Region"), host.get("AvailabilityZone"))
        gpu = gpu_rows.get(key)
        if gpu is None:
            skip(result, provider, host, HOST_WITHOUT_GPU_ROW, f"{count}x {accelerator}")
            continue
        used.add(key)
        instance = Instance(
            instance_type=host.get("InstanceType"),
            accelerator=accelerator,
            gpu_count=count,
            region=key[2],
            zone=key[3],
            info=gpu_info(gpu.get("GpuInfo")),
            vcpus=host.decimal("vCPUs"),
            ram_gib=host.decimal("MemoryGiB"),
        )
        _priced(provider, source, (host, gpu), instance, result)

    for key, gpu in gpu_rows.items():
        if key in used:
            continue
        accelerator, count, region, zone = key
        if accelerator in HOST_BOUND_GPUS:
            skip(result, provider, gpu, GPU_WITHOUT_HOST_ROW, f"{count}x {accelerator}")
            continue
        host = _cheapest_n1_host(n1_hosts.get((region, zone), []), accelerator, count)
        if host is None:
            skip(result, provider, gpu, GPU_WITHOUT_N1_HOST, f"{count}x {accelerator}")
            continue
        instance = Instance(
            instance_type=f"{host.get('InstanceType')} + {count}x {accelerator}",
            accelerator=accelerator,
            gpu_count=count,
            region=region,
            zone=zone,
            info=gpu_info(gpu.get("GpuInfo")),
            vcpus=host.decimal("vCPUs"),
            ram_gib=host.decimal("MemoryGiB"),
        )
        _priced(provider, source, (host, gpu), instance, result)
