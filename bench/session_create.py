#!/usr/bin/env python3
"""Session creation and first-run time by engine choice (GPU machine).

    python3 bench/session_create.py [--model resnet50] [--batches 1 32]
                                    [--precisions fp32 fp16] [--iters 50] [--out DIR]

For each precision, three processes in a row, each creating one session of
the model (the EP alone on GPU 0) and running it at each batch:
  heuristic         cudnn_conv_algo_search=HEURISTIC (the default)
  exhaustive cold   EXHAUSTIVE, engine_cache_file=a fresh path (written)
  exhaustive warm   EXHAUSTIVE, the same file (read: nothing timed)
  exhaustive        (--with-nocache) EXHAUSTIVE with no file: the cold search
No row starts after --budget seconds; the tables are rewritten after each
row, so a cut run keeps what it finished.
Each process reports: InferenceSession's wall time, the first run at each
batch (plans, and with EXHAUSTIVE the engine search, happen there: the
model's batch is dynamic), the sum of the two ("ready"), the median run
after warm-up (host inputs and outputs), and what the EP's log says it
replayed and timed. Warm outputs must equal cold ones bit for bit (same
engines). A process per row: nothing is shared but the file. Writes
$OUT/session_create.md and .json.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hdep  # noqa: E402

MODES = [
    ("heuristic", {"cudnn_conv_algo_search": "HEURISTIC"}, None),
    ("exhaustive cold", {"cudnn_conv_algo_search": "EXHAUSTIVE"}, "cold"),
    ("exhaustive warm", {"cudnn_conv_algo_search": "EXHAUSTIVE"}, "warm"),
    ("exhaustive", {"cudnn_conv_algo_search": "EXHAUSTIVE"}, None),  # --with-nocache
]


def child(a):
    """One session; prints one JSON line."""
    import numpy as np
    import onnxruntime as ort
    opts = json.loads(a.options)
    hdep.register(ort)
    dev = hdep.gpu_device(ort)
    so = hdep.session_options(ort, record_assignment=False)
    if a.info_log:  # the EP's engine cache summary (INFO, on release); not in timed rows
        ort.set_default_logger_severity(1)
        so.log_severity_level = 1
    so.add_provider_for_devices([dev], opts)
    t0 = time.perf_counter()
    sess = ort.InferenceSession(a.model, sess_options=so)
    create_s = time.perf_counter() - t0
    name = sess.get_inputs()[0].name
    res = {"create_s": create_s, "batches": {}}
    for b in a.batches:
        x = np.random.default_rng(b).standard_normal((b, 3, 224, 224)).astype(np.float32)
        t0 = time.perf_counter()
        y = sess.run(None, {name: x})[0]
        first = time.perf_counter() - t0
        for _ in range(5):
            sess.run(None, {name: x})
        ts = []
        for _ in range(a.iters):
            t0 = time.perf_counter()
            sess.run(None, {name: x})
            ts.append((time.perf_counter() - t0) * 1e3)
        np.save(os.path.join(a.tmp, f"{a.tag}-b{b}.npy"), y)
        res["batches"][str(b)] = {"first_run_s": first, "median_ms": hdep.median(ts)}
    del sess  # release: the EP logs its engine cache summary
    print("RESULT " + json.dumps(res), flush=True)


def cache_state(path):
    """(entries, mtime_ns) of an engine cache file; (None, None) when absent."""
    try:
        st = os.stat(path)
        with open(path) as f:
            lines = f.read().splitlines()
        return max(len(lines) - 2, 0), st.st_mtime_ns
    except OSError:
        return None, None


def run_child(a, model, tmp, tag, opts, info_log=False):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--model", model, "--tmp", tmp, "--tag", tag,
           "--options", json.dumps(opts), "--iters", str(a.iters), "--batches"] + [str(b) for b in a.batches]
    if info_log:
        cmd.append("--info-log")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    res = None
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            res = json.loads(line[7:])
    log = p.stderr.splitlines()
    summary = [l for l in log if "choices replayed" in l]
    warnings = [l for l in log if "engine cache" in l and (" W:" in l or "WARNING" in l or "[W:" in l)]
    if res is None:
        raise RuntimeError(f"{tag}: child failed (rc {p.returncode}):\n" + "\n".join(log[-30:]) + p.stdout[-2000:])
    m = re.search(r"\d+ choices replayed, \d+ timed \(\d+ candidates\)", summary[-1]) if summary else None
    res["summary"] = "EP: " + m.group(0) if m else ""
    res["warnings"] = warnings
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 32])
    ap.add_argument("--precisions", nargs="+", default=["fp32", "fp16"])
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--options", default="{}")
    ap.add_argument("--tmp", default="")
    ap.add_argument("--tag", default="")
    ap.add_argument("--info-log", action="store_true")
    ap.add_argument("--with-nocache", action="store_true")
    ap.add_argument("--budget", type=float, default=1e9, help="seconds after which no new row starts")
    a = ap.parse_args()
    if a.child:
        child(a)
        return
    tmp = tempfile.mkdtemp(prefix="hipdnn-session-create-")
    path = a.model if a.model.endswith(".onnx") else os.path.join(tmp, a.model + ".onnx")
    if not a.model.endswith(".onnx"):
        hdep.log(f"exporting {a.model} ...")
        hdep.export_torchvision(a.model, path)
    t_start = time.time()
    rows = []

    def over_budget(what):
        if time.time() - t_start > a.budget:
            hdep.log(f"budget of {a.budget:.0f} s spent: {what} skipped")
            return True
        return False

    for prec in a.precisions:
        cache = os.path.join(tmp, f"engines-{prec}.txt")
        for label, opts, cache_use in MODES:
            if label == "exhaustive" and not a.with_nocache:
                continue
            if over_budget(f"{prec} {label}"):
                continue
            o = dict(opts, precision=prec)
            if cache_use:
                o["engine_cache_file"] = cache
            tag = f"{prec}-{label.replace(' ', '-')}"
            before = cache_state(cache)
            try:
                r = run_child(a, path, tmp, tag, o)
            except Exception as e:  # a row that fails or hangs: say so, go on
                hdep.log(f"{prec} {label}: FAILED: {type(e).__name__}: {str(e)[-3000:]}")
                continue
            after = cache_state(cache)
            r.update(precision=prec, mode=label, tag=tag)
            if cache_use:
                # A warm session that timed anything would have saved (rewritten) the file.
                r["cache_entries"] = after[0]
                r["cache_rewritten"] = before != after
                r["summary"] = (r["summary"] or
                                f"file: {after[0]} entries, {'rewritten' if before != after else 'untouched'}")
            rows.append(r)
            firsts = " ".join(f"b{b} first {r['batches'][str(b)]['first_run_s']:.2f}s run {r['batches'][str(b)]['median_ms']:.2f}ms"
                              for b in a.batches)
            hdep.log(f"{prec:5} {label:16} create {r['create_s']:.2f}s  {firsts}  {r['summary']}"
                     + (f"  WARNINGS: {r['warnings']}" if r["warnings"] else ""))
            compare_outputs(a, tmp, rows)
            write_tables(a, rows)
    # What the EP says it did with a warm file (its INFO log; not timed).
    for prec in a.precisions:
        cache = os.path.join(tmp, f"engines-{prec}.txt")
        if not os.path.exists(cache) or over_budget(f"{prec} log check"):
            continue
        o = {"cudnn_conv_algo_search": "EXHAUSTIVE", "precision": prec, "engine_cache_file": cache}
        try:
            r = run_child(a, path, tmp, f"{prec}-verify", o, info_log=True)
        except Exception as e:
            hdep.log(f"{prec} log check: FAILED: {type(e).__name__}: {str(e)[-3000:]}")
            continue
        hdep.log(f"{prec} warm again, with the EP's INFO log: {r['summary'] or '(no summary line)'}"
                 + (f"  WARNINGS: {r['warnings']}" if r["warnings"] else ""))
        for row in rows:
            if row["precision"] == prec and row["mode"] == "exhaustive warm":
                row["ep_log"] = r["summary"]
        write_tables(a, rows)
    print(open(os.path.join(a.out, "session_create.md")).read() if rows else "no rows")


def compare_outputs(a, tmp, rows):
    """Warm outputs against cold ones (bit for bit), cold against heuristic."""
    import numpy as np
    for r in rows:
        if r["mode"] not in ("exhaustive warm", "exhaustive cold"):
            continue
        for b in a.batches:
            f = lambda m: os.path.join(tmp, f"{r['precision']}-{m}-b{b}.npy")  # noqa: E731
            ref = f("exhaustive-cold") if r["mode"] == "exhaustive warm" else f("heuristic")
            if not os.path.exists(ref):
                continue
            mine, other = np.load(f(r["mode"].replace(" ", "-"))), np.load(ref)
            cell = r["batches"][str(b)]
            if r["mode"] == "exhaustive warm":
                cell["identical_to_cold"] = mine.shape == other.shape and bool(np.array_equal(mine, other))
            else:
                d = np.linalg.norm(mine.astype(np.float64) - other) / max(np.linalg.norm(other), 1e-30)
                cell["rel_l2_vs_heuristic"] = float(d)


def write_tables(a, rows):
    cols = " | ".join(f"b{b} first run s | b{b} run ms" for b in a.batches)
    md = [f"Session creation, {a.model} on {hdep.gpu_name()}: create = InferenceSession; first run = plans "
          f"built (and, with EXHAUSTIVE, engines searched); run = median of {a.iters} runs, host I/O.", "",
          f"| precision | engine choice | create s | {cols} | ready s (create + first runs) | outputs | engine cache |",
          "|---|---|---|" + "---|---|" * len(a.batches) + "---|---|---|"]
    for r in rows:
        cells = " | ".join(f"{r['batches'][str(b)]['first_run_s']:.2f} | {r['batches'][str(b)]['median_ms']:.2f}"
                           for b in a.batches)
        ready = r["create_s"] + sum(r["batches"][str(b)]["first_run_s"] for b in a.batches)
        outs = []
        for b in a.batches:
            c = r["batches"][str(b)]
            if "identical_to_cold" in c:
                outs.append(f"b{b} {'= cold bitwise' if c['identical_to_cold'] else 'DIFFER from cold'}")
            if "rel_l2_vs_heuristic" in c:
                outs.append(f"b{b} rel L2 {c['rel_l2_vs_heuristic']:.1e} vs heuristic")
        log = r.get("ep_log") or r.get("summary", "")
        md.append(f"| {r['precision']} | {r['mode']} | {r['create_s']:.2f} | {cells} | {ready:.2f} | "
                  f"{'; '.join(outs)} | {log} |")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "session_create.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(a.out, "session_create.json"), "w") as f:
        json.dump({"model": a.model, "batches": a.batches, "rows": rows, "versions": hdep.versions()}, f, indent=1)

if __name__ == "__main__":
    main()
