#!/usr/bin/env python3
"""Does a session run slower after other sessions ran in the process? (GPU machine)

    python3 bench/session_history.py [--model vit:1] [--other bert:8] [--cycles 5]
                                     [--other-option KEY=VALUE ...] [--no-run] [--keep] [--iters 100]

One process: a precision=fp16 session S of --model (a tx_bench.py model,
its export in --work reused, else made) is timed (run_with_iobinding, device
I/O, median of --iters, three times); then --cycles times a session of
--other (same precision, plus the --other-option provider options) is
created, run twice (its plan and, by default, its GPU graph) unless
--no-run, and destroyed (kept alive with --keep), and S is timed again.
--other tiny is a 4x256 Linear-GELU-Linear model made here. Each line also says the
process's thread count, the CPU seconds it spent in 0.5 s of idling, and
the GPU's free memory, so a slowdown can be told from leaked threads or
memory. Found 2026-11-28 on an H200 (benchmarks.md): ViT b1 0.48 ms
fresh, 0.52-0.57 after two or three BERT b8 sessions had run, with the
same kernels and longer gaps between them; 19:10, narrowed: it comes
with the third other session that runs, tiny ones too, destroyed or kept.
Writes $OUT/session_history.md.
"""
import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hdep  # noqa: E402
import tx_bench  # noqa: E402


def prepare(torch, np, work, row):
    """(model path, feeds) of a tx_bench MODEL:BATCH row, or of `tiny`."""
    if row == "tiny":
        path = os.path.join(work, "tiny.onnx")
        if not os.path.exists(path):
            m = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.Linear(256, 256)).eval()
            torch.onnx.export(m, (torch.randn(4, 256),), path, input_names=["x"], output_names=["y"], dynamo=False,
                              opset_version=17)
        return path, {"x": np.random.default_rng(0).standard_normal((4, 256)).astype(np.float32)}
    name, b = row.split(":") if ":" in row else (row, "1")
    m, example, exporter = tx_bench.build(name, torch)
    path = os.path.join(work, f"{name}.onnx")
    if not os.path.exists(path):
        tx_bench.export(name, torch, m, example, exporter, path)
    return path, tx_bench.inputs_for(example, int(b), np)


def open_session(ort, np, dev, path, feeds, options, runs):
    """(session, binding, kept values): fp16, device I/O, run `runs` times."""
    sess = hdep.ep_session(ort, path, dev, dict({"precision": "fp16"}, **options))
    shapes = [o.shape for o in hdep.cpu_session(ort, path).run(None, feeds)]
    io, keep = tx_bench.device_io(ort, np, sess, feeds, shapes)
    for _ in range(runs):
        sess.run_with_iobinding(io)
    return sess, io, keep


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="vit:1")
    ap.add_argument("--other", default="bert:8")
    ap.add_argument("--cycles", type=int, default=5)
    ap.add_argument("--other-option", action="append", default=[], metavar="KEY=VALUE", type=hdep.key_value)
    ap.add_argument("--no-run", action="store_true", help="create and destroy the other sessions without running them")
    ap.add_argument("--keep", action="store_true", help="keep the other sessions alive to the end")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--out", default=os.environ.get("OUT") or "bench-out")
    ap.add_argument("--work", default=os.environ.get("TMPDIR", "/tmp") + "/hipdnn-tx")
    a = ap.parse_args()
    import numpy as np
    import onnxruntime as ort
    import torch
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    hdep.register(ort)
    dev = hdep.gpu_device(ort)
    other_opts = hdep.options_dict(a.other_option)
    mpath, mfeeds = prepare(torch, np, a.work, a.model)
    opath, ofeeds = prepare(torch, np, a.work, a.other)
    s, io, keep = open_session(ort, np, dev, mpath, mfeeds, {}, 2)
    lines = [f"# {a.model} after sessions of {a.other} ({torch.cuda.get_device_name(0)}, "
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})", "",
             f"other sessions: options {other_opts or '{}'}, {'never run' if a.no_run else 'run twice'}, "
             f"{'kept' if a.keep else 'destroyed'}; "
             f"ms = median of {a.iters} runs of {a.model} (precision=fp16, device I/O), three times", "",
             "| after | ms | threads | CPU s in 0.5 s idle | GPU free MiB |", "|---|---|---|---|---|"]

    def row(label):
        c0 = os.times()
        time.sleep(0.5)
        c1 = os.times()
        idle_cpu = (c1.user + c1.system) - (c0.user + c0.system)
        ms = [hdep.time_fn(lambda: s.run_with_iobinding(io), a.iters, 5, torch.cuda.synchronize)["median_ms"]
              for _ in range(3)]
        lines.append(f"| {label} | {', '.join(f'{x:.3f}' for x in ms)} | {len(os.listdir('/proc/self/task'))} | "
                     f"{idle_cpu:.2f} | {torch.cuda.mem_get_info()[0] >> 20} |")
        print(lines[-1], flush=True)

    row("its own warm-up")
    row("itself again")
    kept = []
    for i in range(a.cycles):
        other = open_session(ort, np, dev, opath, ofeeds, other_opts, 0 if a.no_run else 2)
        if a.keep:
            kept.append(other)
        del other
        gc.collect()
        row(f"{i + 1} other session(s)")
    with open(os.path.join(a.out, "session_history.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
