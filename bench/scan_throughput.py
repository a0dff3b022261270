"""Benchmark: code-scan throughput (MB/s, files/s) and peak memory on a large source tree.

The tree: the C, C++, CUDA and Python sources of this virtualenv's installed packages (real
code: PyTorch is not installed, but numpy, tree-sitter grammars, Django, Celery... are), plus a
generated CUDA corpus with the constructs the rules look for. The scan runs in a child process
on one core, as the worker runs it; wall time and the child's peak RSS are measured.

    .venv/bin/python bench/scan_throughput.py [--max-mb 80]
"""

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE_SUFFIXES = {".py", ".h", ".hpp", ".c", ".cc", ".cpp", ".cu", ".cuh"}
CHILD = """
import json, sys, time
from pathlib import Path
from jobs.domain.codescan import ScanLimits, scan_paths
start = time.perf_counter()
report = scan_paths(Path(sys.argv[1]), limits=ScanLimits(max_members=10**6,
                    max_total_bytes=10**10))
print(json.dumps({"seconds": time.perf_counter() - start, "files": report.files_scanned,
                  "bytes": report.bytes_scanned, "findings": len(report.findings),
                  "skipped": len(report.skipped)}))
"""
KERNEL = """
#include <mma.h>
#define WARP_SIZE 32
using namespace nvcuda;
__global__ void gemm_{n}(const half* a, const half* b, float* c, int n) {{
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  int lane = threadIdx.x % 32;
  float v = c[lane];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(lane), "l"(a));
#endif
  c[lane] = v + __ldg(&c[n]);
}}
"""


def build_tree(target: Path, max_bytes: int) -> None:
    site = Path(sys.prefix) / "lib"
    total = 0
    for path in sorted(site.rglob("*")):
        if path.suffix in SOURCE_SUFFIXES and path.is_file() and not path.is_symlink():
            size = path.stat().st_size
            if total + size > max_bytes * 0.9:
                break
            destination = target / "site" / path.relative_to(site)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, destination)
            total += size
    rng = random.Random(7)
    cuda = target / "cuda"
    cuda.mkdir()
    index = 0
    while total < max_bytes:
        text = "".join(KERNEL.format(n=index * 50 + k) for k in range(50))
        text += f"// padding {rng.random()}\n" * rng.randint(10, 100)
        (cuda / f"kernels_{index}.cu").write_text(text)
        total += len(text)
        index += 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-mb", type=int, default=80)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scan-bench-") as tmp:
        tree = Path(tmp)
        build_tree(tree, args.max_mb * 1024 * 1024)
        on_disk = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file())
        # One process, single-threaded: one core, as a worker process gets.
        command = [sys.executable, "-c", CHILD, str(tree)]
        wall_start = time.perf_counter()
        child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        _, _, usage = os.wait4(child.pid, 0)
        wall_s = time.perf_counter() - wall_start
        result = json.loads(child.stdout.read())
    mb = result["bytes"] / 1e6
    report = {
        "benchmark": "code scan throughput on one core",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "tree_bytes_on_disk": on_disk,
        "files_scanned": result["files"],
        "bytes_scanned": result["bytes"],
        "findings": result["findings"],
        "skipped": result["skipped"],
        "scan_seconds": round(result["seconds"], 2),
        "process_wall_seconds": round(wall_s, 2),
        "mb_per_second": round(mb / result["seconds"], 2),
        "files_per_second": round(result["files"] / result["seconds"], 1),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "goal_mb_per_second": 2.0,
        "peer": "hipify-perl -examine: about 3-4 KB/s of CUDA on these machines (issue text)",
    }
    out = ROOT / "bench" / "results" / "scan_throughput.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
