#!/usr/bin/env python3
"""Where the time of a transformer row goes, ours against torch (GPU machine).

    python3 bench/tx_profile.py [MODEL:BATCH ...] [--runs N] [--out DIR]

MODEL is one of bench/tx_bench.py's (its export in $TMPDIR/hipdnn-tx is
reused, else made). For each row, in one process:
  - the kernels of our EP's runs as they replay (the default options: GPU
    graph on), and of torch's fp32 CUDA graph, read by torch's profiler
    (CUPTI sees every kernel of the process, ours included): per kernel name
    the launches and GPU time per run, the GPU-busy time and the span from
    the first kernel's start to the last one's end per run (span - busy =
    the gaps between kernels);
  - our steps (profile_file: one eager run per step, GPU time between events),
    with the ONNX nodes each step came from;
  - the model's graph without its weights (OUT/NAME.skel.onnx: initializers
    over 1 KiB are external data in a file that is not written), to study
    the graph elsewhere.
--precision fp16: our session with provider option precision=fp16 against
torch's fp16 CUDA graph (issue 12's comparison) instead of fp32 against fp32.
Writes OUT/NAME-bB.profile.txt (the tables) and prints them.
"""
import argparse
import collections
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hdep  # noqa: E402
import tx_bench  # noqa: E402


def log(msg):
    print(f"tx_profile: {msg}", flush=True)


def kernels_of(prof_dir, tag, prof):
    """[(name, ts_us, dur_us)] of the GPU kernels in a torch profile, by start."""
    path = os.path.join(prof_dir, f"trace-{tag}.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        ev = json.load(f)
    ev = ev.get("traceEvents", ev) if isinstance(ev, dict) else ev
    ks = [(e["name"], float(e["ts"]), float(e.get("dur", 0))) for e in ev
          if e.get("ph") == "X" and e.get("cat", "").lower() in ("kernel", "gpu_memcpy", "gpu_memset")]
    os.remove(path)
    return sorted(ks, key=lambda k: k[1])


def profile_fn(torch, fn, runs, tag, work):
    from torch.profiler import ProfilerActivity, profile
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            fn()
            torch.cuda.synchronize()
    return kernels_of(work, tag, prof)


def split_runs(ks, runs):
    """The kernel list cut into runs at the largest gaps (runs are synced)."""
    if runs <= 1 or len(ks) < runs:
        return [ks]
    gaps = sorted(range(1, len(ks)), key=lambda i: -(ks[i][1] - (ks[i - 1][1] + ks[i - 1][2])))[:runs - 1]
    cuts = [0] + sorted(gaps) + [len(ks)]
    return [ks[cuts[i]:cuts[i + 1]] for i in range(len(cuts) - 1)]


def short(name, n=70):
    name = name.replace("void ", "").replace("(anonymous namespace)::", "")
    return (name.split("(")[0] if "(" in name else name)[:n]


def table(title, ks, runs):
    per = split_runs(ks, runs)
    busy = [sum(k[2] for k in r) for r in per]
    span = [(r[-1][1] + r[-1][2] - r[0][1]) if r else 0 for r in per]
    lines = [f"== {title}: {len(ks) / max(1, len(per)):.0f} kernels a run; GPU busy "
             f"{hdep.median(busy) / 1e3:.3f} ms, first start to last end {hdep.median(span) / 1e3:.3f} ms (medians of {len(per)} runs)"]
    agg = collections.defaultdict(lambda: [0, 0.0])
    for name, _, dur in ks:
        a = agg[short(name)]
        a[0] += 1
        a[1] += dur
    lines.append(f"{'kernel':70s} {'calls':>6s} {'us/run':>8s} {'us/call':>8s}")
    for name, (n, dur) in sorted(agg.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"{name:70s} {n / len(per):6.1f} {dur / len(per):8.1f} {dur / n:8.2f}")
    if per:  # one run in order: what each launch took and the gap before it
        r = per[len(per) // 2]
        lines.append(f"-- one run in order: start offset us, gap before us, dur us, kernel")
        prev_end = r[0][1] if r else 0
        for name, ts, dur in r:
            lines.append(f"{ts - r[0][1]:9.1f} {ts - prev_end:6.1f} {dur:7.2f}  {short(name, 100)}")
            prev_end = ts + dur
    return lines


def steps_table(path):
    with open(path) as f:
        d = json.load(f)
    ev = d.get("traceEvents", d) if isinstance(d, dict) else d
    rows = [e for e in ev if isinstance(e.get("args"), dict) and "step" in e["args"]]
    if not rows:
        return [f"(no steps in {path})"]
    # the last run's steps (each step once per run; the first runs build plans)
    nsteps = max(int(e["args"]["step"]) for e in rows) + 1
    last = rows[-nsteps:]
    tot = sum(float(e["args"].get("dur_ns", 0)) for e in last) / 1e3
    lines = [f"== our steps (eager, one run): {nsteps} steps, {tot:.1f} us between events"]
    for e in last:
        a = e["args"]
        lines.append(f"{a['step']:>4s} {float(a.get('dur_ns', 0)) / 1e3:8.1f} {a.get('op_name', ''):22s} "
                     f"{str(a.get('output_type_shape', ''))[:60]:60s} {a.get('nodes', '')[:240]}")
    return lines


def skeleton(path, out):
    import onnx
    m = onnx.load(path)
    dst = os.path.join(out, os.path.basename(path).replace(".onnx", ".skel.onnx"))
    onnx.save_model(m, dst, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=os.path.basename(dst) + ".data", size_threshold=1024)
    data = dst + ".data"
    if os.path.exists(data):
        os.remove(data)
    return dst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rows", nargs="*", default=["convnext:1", "gpt2:1"])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--out", default=os.environ.get("OUT") or "bench-out")
    ap.add_argument("--work", default=os.environ.get("TMPDIR", "/tmp") + "/hipdnn-tx")
    ap.add_argument("--no-skeleton", action="store_true")
    ap.add_argument("--precision", choices=["fp32", "fp16"], default="fp32",
                    help="ours with precision=fp16 against torch's fp16 graph")
    a = ap.parse_args()
    import numpy as np
    import onnxruntime as ort
    import torch
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    hdep.register(ort)
    dev = hdep.gpu_device(ort)
    for row in a.rows:
        name, b = row.split(":") if ":" in row else (row, "1")
        b = int(b)
        half = a.precision == "fp16"
        opts = {"precision": "fp16"} if half else {}
        lines = [f"# {name} batch {b}, {a.precision}, on {torch.cuda.get_device_name(0)}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"]
        m, example, exporter = tx_bench.build(name, torch)
        path = os.path.join(a.work, f"{name}.onnx")
        if not os.path.exists(path):
            tx_bench.export(name, torch, m, example, exporter, path)
        if not a.no_skeleton:
            try:
                log(f"[{name}] graph without weights: {skeleton(path, a.out)}")
            except Exception as e:
                log(f"[{name}] skeleton failed: {type(e).__name__}: {e}")
        feeds = tx_bench.inputs_for(example, b, np)
        cpu = hdep.cpu_session(ort, path)
        ref = cpu.run(None, feeds)
        del cpu
        try:
            ep = hdep.ep_session(ort, path, dev, opts)
            got = ep.run(None, feeds)
            lines.append(f"ours vs CPU EP: {hdep.compare_str(hdep.compare(got[0], ref[0]))}")
            io, keep = tx_bench.device_io(ort, np, ep, feeds, [r.shape for r in ref])
            ms = hdep.time_fn(lambda: ep.run_with_iobinding(io), 30, 5, torch.cuda.synchronize)["median_ms"]
            lines.append(f"ours (graph replay, device I/O): {ms:.3f} ms median of 30")
            ks = profile_fn(torch, lambda: ep.run_with_iobinding(io), a.runs, "ours", a.work)
            lines += table(f"ours, GPU graph replay ({name} b{b})", ks, a.runs)
            del io, keep, ep
        except Exception as e:
            lines.append(f"ours failed: {type(e).__name__}: {e}")
        try:
            sp = os.path.join(a.work, f"steps-{name}-b{b}-{a.precision}.json")
            ep = hdep.ep_session(ort, path, dev, dict(opts, profile_file=sp))
            for _ in range(3):
                ep.run(None, feeds)
            del ep  # the trace is written when the session goes
            lines += steps_table(sp)
        except Exception as e:
            lines.append(f"steps failed: {type(e).__name__}: {e}")
        try:
            fc = tx_bench.build(name, torch)[0]
            g = tx_bench.positional(torch, fc, list(example)).cuda()
            xs = [torch.from_numpy(v).cuda() for v in feeds.values()]
            if half:
                g = g.half()
                xs = [x.half() if x.is_floating_point() else x for x in xs]
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            graph, _ = hdep.torch_capture(torch, g, *xs)
            with torch.no_grad():
                ms = hdep.time_fn(graph.replay, 30, 5, torch.cuda.synchronize)["median_ms"]
                lines.append(f"torch {a.precision} graph: {ms:.3f} ms median of 30")
                ks = profile_fn(torch, graph.replay, a.runs, "torch", a.work)
                lines += table(f"torch {a.precision} CUDA graph ({name} b{b})", ks, a.runs)
            torch.backends.cudnn.allow_tf32 = True
            del graph, g
            torch.cuda.empty_cache()
        except Exception as e:
            lines.append(f"torch failed: {type(e).__name__}: {e}")
        txt = "\n".join(lines) + "\n"
        with open(os.path.join(a.out, f"{name}-b{b}-{a.precision}.profile.txt"), "w") as fh:
            fh.write(txt)
        print(txt[:6000], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
