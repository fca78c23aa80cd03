"""Device memory of the transformer bench models (GPU machine): ours beside
torch eager's, measured as bench/bench.py measures the CNNs (its "Device
memory" method: each side's caching-allocator peak plus the CUDA context;
ours from build/bin/hipdnn-ep-run --json in a process of its own, at the
model's sequence length).

usage: python3 bench/tx_memory.py [MODEL ...] [--json FILE]
       (models of bench/tx_bench.py; default: bert at batch 1 and 8)
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import tx_bench  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", default=["bert"])
    ap.add_argument("--work", default=os.environ.get("TMPDIR", "/tmp") + "/hipdnn-tx")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    import torch
    ctx = bench.cuda_context_bytes(torch)
    mib = bench.MIB
    print(f"CUDA context: {ctx / mib:.0f} MiB; method: {bench.MEMORY_METHOD}", flush=True)
    rows = []
    os.makedirs(a.work, exist_ok=True)
    for name in a.models:
        m, example, exporter = tx_bench.build(name, torch)
        path = os.path.join(a.work, f"{name}.onnx")
        if not os.path.exists(path):
            tx_bench.export(name, torch, m, example, exporter, path)
        m = m.cuda()
        for b in tx_bench.ROWS.get(name, [1]):
            mem, why = bench.ep_memory(path, b, extra=("--seq", str(tx_bench.SEQ)))
            feeds = {k: v.repeat(b, *([1] * (v.dim() - 1))).cuda() for k, v in example.items()}
            with torch.no_grad():
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats()
                for _ in range(3):
                    m(**feeds)
                torch.cuda.synchronize()
            t_peak = torch.cuda.max_memory_reserved()
            row = {"model": name, "batch": b, "seq": tx_bench.SEQ, "context_bytes": ctx, "ours": mem, "ours_error": why,
                   "torch_eager_max_reserved_bytes": t_peak}
            rows.append(row)
            if mem:
                ours = (mem["pool_peak_bytes"] + ctx) / mib
                print(f"| {name} | {b} | {ours:.0f} | {int(mem['weights_bytes']) / mib:.0f} | "
                      f"{int(mem['run_buffers_bytes']) / mib:.0f} | {(t_peak + ctx) / mib:.0f} | "
                      f"{ours / ((t_peak + ctx) / mib):.2f} |", flush=True)
            else:
                print(f"| {name} | {b} | - ({why}) | | | {(t_peak + ctx) / mib:.0f} | |", flush=True)
        del m
        torch.cuda.empty_cache()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
