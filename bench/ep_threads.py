#!/usr/bin/env python3
"""One session of HipDNNExecutionProvider run from many Python threads
(GPU machine; the concurrency issue's table).

  ep_threads.py --work DIR [--model resnet50] [--threads 8] [--iters 40]
                [--configs all] [--json FILE]

For each configuration (options x batch sizes) in its own process, so that
a hang is recorded and the next configuration still runs:
  1. 16 seeded inputs; each one's output computed alone (single thread);
     input 0 also against the CPU EP, so the references are right;
  2. --threads threads call session.run --iters times each on random inputs
     of those 16 and compare every output with the run alone of the same
     input (tolerance 1e-3 x (1 + max |ref|), as the issue measured);
  3. wrong outputs, errors, worst error, and whether it finished in time.
Then throughput at batch 1 with 1, 4 and 8 threads (default options).
Prints a table; exit 0 when every configuration had 0 wrong, 0 errors and no
hang."""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hdep  # noqa: E402
from hdep import log  # noqa: E402

CONFIGS = [
    ("defaults", {}, [2]),
    ("defaults", {}, [1, 2, 3, 4]),
    ("use_tf32=0", {"use_tf32": "0"}, [2]),
    ("enable_cuda_graph=0", {"enable_cuda_graph": "0"}, [2]),
    ("enable_cuda_graph=0", {"enable_cuda_graph": "0"}, [1, 2, 3, 4]),
]
NINPUTS = 16


def one_config(a, k):
    """Runs configuration k in this process; prints one RESULT line."""
    import numpy as np
    import onnxruntime as ort
    name, opts, batches = CONFIGS[k]
    res = {"config": name, "options": opts, "batches": batches, "threads": a.threads, "iters": a.iters}
    hdep.register(ort)
    dev = hdep.gpu_device(ort)
    sess = hdep.ep_session(ort, a.path, dev, provider_options=opts)
    inp = sess.get_inputs()[0].name
    rng = np.random.default_rng(42)
    xs = [rng.standard_normal((batches[i % len(batches)], 3, 224, 224), dtype=np.float32) for i in range(NINPUTS)]
    refs = [sess.run(None, {inp: x})[0] for x in xs]
    cpu = hdep.cpu_session(ort, a.path)
    res["ref_vs_cpu"] = hdep.compare(refs[0], cpu.run(None, {inp: xs[0]})[0])
    res["ref_max_abs"] = float(max(np.abs(r).max() for r in refs))
    lock = threading.Lock()
    stats = {"runs": 0, "wrong": 0, "errors": 0, "worst": 0.0, "inexact": 0, "first_error": None}

    def worker(t):
        r = np.random.default_rng(1000 + t)
        for _ in range(a.iters):
            i = int(r.integers(NINPUTS))
            err = None
            try:
                y = sess.run(None, {inp: xs[i]})[0]
            except Exception as e:  # a wrong answer's quieter cousin: count it
                err = str(e)[:300]
            with lock:
                stats["runs"] += 1
                if err:
                    stats["errors"] += 1
                    stats["first_error"] = stats["first_error"] or err
                    continue
                d = float(np.abs(y.astype(np.float64) - refs[i]).max()) if y.shape == refs[i].shape else float("inf")
                d = d if np.isfinite(d) else float("inf")
                tol = 1e-3 * (1 + float(np.abs(refs[i]).max()))
                if d > tol:
                    stats["wrong"] += 1
                elif not np.array_equal(y, refs[i]):
                    stats["inexact"] += 1
                stats["worst"] = max(stats["worst"], d)

    ths = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(a.threads)]
    t0 = time.time()
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    res.update(stats)
    res["seconds"] = round(time.time() - t0, 2)
    res["images_per_s"] = round(sum(xs[i % NINPUTS].shape[0] for i in range(stats["runs"])) / max(res["seconds"], 1e-9), 1)
    print("RESULT " + json.dumps(res, default=str), flush=True)


def throughput(a):
    """Batch-1 runs per second with 1, 4, 8 threads on one session (default options)."""
    import numpy as np
    import onnxruntime as ort
    hdep.register(ort)
    dev = hdep.gpu_device(ort)
    sess = hdep.ep_session(ort, a.path, dev)
    inp = sess.get_inputs()[0].name
    x = np.random.default_rng(3).standard_normal((1, 3, 224, 224), dtype=np.float32)
    for _ in range(20):
        sess.run(None, {inp: x})
    out = []
    for nt in (1, 4, 8):
        count = [0]
        lock = threading.Lock()
        stop = time.time() + a.seconds

        def worker():
            n = 0
            while time.time() < stop:
                sess.run(None, {inp: x})
                n += 1
            with lock:
                count[0] += n

        ths = [threading.Thread(target=worker, daemon=True) for _ in range(nt)]
        t0 = time.time()
        for t in ths:
            t.start()
        for t in ths:
            t.join()
        out.append({"threads": nt, "runs_per_s": round(count[0] / (time.time() - t0), 1)})
    print("RESULT " + json.dumps({"throughput": out}), flush=True)


def child(a, args):
    """Runs this script with args in a subprocess; its RESULT, or a hang/crash record."""
    cmd = [sys.executable, os.path.abspath(__file__), "--path", a.path, "--threads", str(a.threads),
           "--iters", str(a.iters), "--seconds", str(a.seconds)] + args
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        return {"hung": True, "seconds": round(time.time() - t0, 1)}
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    return {"crashed": True, "rc": p.returncode, "stderr": p.stderr[-1500:]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default="/tmp/hdep-threads")
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--path", help="(internal) the exported model")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--seconds", type=float, default=4.0, help="per throughput point")
    ap.add_argument("--timeout", type=float, default=150.0, help="per configuration: past it, a hang")
    ap.add_argument("--one", type=int, help="(internal) run configuration N here")
    ap.add_argument("--throughput", action="store_true", help="(internal)")
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.one is not None:
        one_config(a, a.one)
        return 0
    if a.throughput:
        throughput(a)
        return 0
    os.makedirs(a.work, exist_ok=True)
    a.path = os.path.join(a.work, f"{a.model}.onnx")
    if not os.path.exists(a.path):
        log(f"exporting {a.model} (random weights, opset 17, dynamic batch) ...")
        hdep.export_torchvision(a.model, a.path)
    rows = []
    for k, (name, opts, batches) in enumerate(CONFIGS):
        log(f"config {k}: {name}, batches {batches}: {a.threads} threads x {a.iters} runs ...")
        r = child(a, ["--one", str(k)])
        r.setdefault("config", name)
        r["batches"] = batches
        rows.append(r)
        log("  " + json.dumps({x: r.get(x) for x in ("runs", "wrong", "errors", "worst", "inexact", "seconds",
                                                      "hung", "crashed", "first_error")}, default=str))
    tp = child(a, ["--throughput"])
    ok = all(not r.get("hung") and not r.get("crashed") and r.get("wrong") == 0 and r.get("errors") == 0
             and r.get("ref_vs_cpu", {}).get("pass") for r in rows)
    print()
    print(f"{a.model}, one session, {a.threads} threads x {a.iters} runs, {hdep.gpu_name()}")
    print(f"{'options':<22} {'batches':<10} {'wrong':>7} {'errors':>7} {'worst abs':>10} {'ref vs CPU':>11} "
          f"{'img/s':>8}  note")
    for r in rows:
        note = "HANG" if r.get("hung") else ("CRASH" if r.get("crashed") else "")
        rvc = r.get("ref_vs_cpu", {})
        rel = f"{rvc['rel_l2']:.1e}" if "rel_l2" in rvc else "?"
        print(f"{r['config']:<22} {','.join(map(str, r['batches'])):<10} {r.get('wrong', '-')!s:>7} "
              f"{r.get('errors', '-')!s:>7} {r.get('worst', float('nan')):>10.3g} {rel:>11} "
              f"{r.get('images_per_s', 0):>8}  {note} {(r.get('first_error') or '')[:80]}")
    if "throughput" in tp:
        base = tp["throughput"][0]["runs_per_s"]
        print("throughput, batch 1, default options: " + ", ".join(
            f"{t['threads']} thread(s) {t['runs_per_s']} runs/s ({t['runs_per_s'] / base:.2f}x)" for t in tp["throughput"]))
    else:
        print(f"throughput: {tp}")
    print("PASS" if ok else "FAIL")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows, "throughput": tp, "gpu": hdep.gpu_name(), "pass": ok}, f, indent=1, default=str)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
