#!/usr/bin/env python3
"""GPU-machine checks of HipDNNExecutionProvider through ONNX Runtime's Python API
(scripts/gpu-check.sh steps e and f).

  ep_check.py model --work DIR [--model resnet50] [--batches 1 8] [--json FILE]
      Exports the torchvision model (random weights, opset 17, dynamic batch),
      runs each batch through our EP (GPU device, host inputs) and through the
      CPU EP, and reports rel L2 / max abs / max rel error (PASS when
      rel L2 < 1e-2: fp32 with TF32 convolutions) and the node placement.
  ep_check.py leak [--model FILE] [--runs 1000] [--threads N] [--batches 1 2 4] [--json FILE]
      Runs a model (default: a small Conv model built here) --runs times in
      one session (from --threads threads, over the --batches shapes) and
      samples host RSS and device memory after warm-up and at the last run;
      FAIL when either grew by more than 5%. Does not import torch.
  ep_check.py oom --work DIR [--limit-mb 600] [--big 256] [--json FILE]
      ResNet-50 in a session with gpu_mem_limit: a batch too large for the
      limit must fail with a message naming the limit, and the same session
      must then run batch 1 correctly (vs the CPU EP), twice over.

Exit status 0 = PASS, 1 = FAIL, 2 = could not run (no GPU device, export failed...).
"""
import argparse
import gc
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hdep  # noqa: E402
from hdep import log  # noqa: E402


def write_json(path, obj):
    if not path:
        return
    with open(path, "w") as f:
        json.dump(obj, f, indent=2, default=str)
    log(f"wrote {path}")


# ---- model --------------------------------------------------------------------

def cmd_model(a):
    res = {"check": "model", "model": a.model, "batches": a.batches, "pass": False}
    os.makedirs(a.work, exist_ok=True)
    path = os.path.join(a.work, f"{a.model}.onnx")
    try:
        if os.path.exists(path) and not a.force:
            log(f"using existing {path}")
            res["export"] = {"path": path, "reused": True}
        else:
            log(f"exporting torchvision {a.model} (weights=None, opset {a.opset}, dynamic batch) ...")
            res["export"] = hdep.export_torchvision(a.model, path, opset=a.opset)
            log(f"  exported with the {res['export']['exporter']} exporter in {res['export']['seconds']} s")
    except Exception as e:
        res["error"] = f"export: {e}"
        log(f"FAIL: {res['error']}")
        write_json(a.json, res)
        return 2

    import numpy as np
    import onnxruntime as ort
    res["versions"] = hdep.versions()
    log(f"onnxruntime {ort.__version__} from {os.path.dirname(ort.__file__)}")
    try:
        lib = hdep.register(ort)
        log(f"registered {lib}")
        for d in hdep.ep_devices(ort):
            log("  device: " + hdep.describe_device(d))
        dev = hdep.gpu_device(ort)
    except Exception as e:
        res["error"] = str(e)
        log(f"FAIL: {e}")
        write_json(a.json, res)
        return 2

    t0 = time.time()
    cpu = hdep.cpu_session(ort, path)
    try:
        sess = hdep.ep_session(ort, path, dev, opt_level=a.opt_level)
    except Exception as e:
        res["error"] = f"session with {hdep.EP_NAME}: {e}"
        log(f"FAIL: {res['error']}")
        write_json(a.json, res)
        return 1
    res["session_create_s"] = round(time.time() - t0, 2)
    res["providers"] = sess.get_providers()
    res["placement"] = hdep.placement(sess)
    log(f"session providers: {res['providers']} (created in {res['session_create_s']} s, opt level {a.opt_level})")
    log("placement: " + hdep.placement_str(res["placement"]))

    inp = sess.get_inputs()[0].name
    ok = True
    res["runs"] = []
    rng = np.random.default_rng(1234)
    for b in a.batches:
        x = rng.standard_normal((b, 3, 224, 224), dtype=np.float32)
        row = {"batch": b}
        try:
            t = time.time()
            got = sess.run(None, {inp: x})
            row["first_run_ms"] = round((time.time() - t) * 1e3, 1)
            ts = []
            for _ in range(a.iters):
                t = time.perf_counter()
                sess.run(None, {inp: x})
                ts.append((time.perf_counter() - t) * 1e3)
            row["median_ms_host_io"] = round(float(np.median(ts)), 3) if ts else None
        except Exception as e:
            row["error"] = f"run: {e}"
            row["pass"] = False
            ok = False
            log(f"  batch {b}: FAIL: {row['error']}")
            res["runs"].append(row)
            continue
        ref = cpu.run(None, {inp: x})
        cmps = [hdep.compare(g, r) for g, r in zip(got, ref)]
        row["outputs"] = cmps
        row["pass"] = all(c["pass"] for c in cmps)
        ok &= row["pass"]
        for o, c in zip(sess.get_outputs(), cmps):
            log(f"  batch {b}: {o.name}: {hdep.compare_str(c)}; first run {row['first_run_ms']} ms, "
                f"median {row['median_ms_host_io']} ms over {a.iters} runs (host I/O)")
        res["runs"].append(row)
    res["pass"] = ok
    log(("PASS" if ok else "FAIL") + f": {a.model} batches {a.batches} through {hdep.EP_NAME} vs the CPU EP")
    write_json(a.json, res)
    return 0 if ok else 1


# ---- leak ---------------------------------------------------------------------

def small_conv_model(path):
    """A Conv-Relu-Conv model [N,16,56,56] built with onnx.helper."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    w1 = numpy_helper.from_array((rng.standard_normal((32, 16, 3, 3)) * 0.1).astype(np.float32), "w1")
    b1 = numpy_helper.from_array(rng.standard_normal(32).astype(np.float32), "b1")
    w2 = numpy_helper.from_array((rng.standard_normal((16, 32, 3, 3)) * 0.1).astype(np.float32), "w2")
    nodes = [
        helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["output"], pads=[1, 1, 1, 1]),
    ]
    g = helper.make_graph(nodes, "leak_conv",
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 16, 56, 56])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["N", 16, 56, 56])],
                          initializer=[w1, b1, w2])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = min(m.ir_version, 8)
    onnx.save(m, path)


def host_rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


class GpuMem:
    """Device memory in use: this process's (NVML per-process) when NVML lists
    it, else the whole device's used memory. No CUDA context is created."""

    def __init__(self):
        self.how = None
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nv = pynvml
            self.h = pynvml.nvmlDeviceGetHandleByIndex(0)
        except Exception as e:
            self.nv = None
            self.err = f"pynvml: {e}"

    def mib(self):
        if self.nv is None:
            return self._smi()
        pid = os.getpid()
        try:
            for p in self.nv.nvmlDeviceGetComputeRunningProcesses(self.h):
                if p.pid == pid and p.usedGpuMemory is not None:
                    self.how = "nvml per-process"
                    return p.usedGpuMemory / 2**20
        except Exception:
            pass
        self.how = "nvml device used (whole GPU)"
        return self.nv.nvmlDeviceGetMemoryInfo(self.h).used / 2**20

    def _smi(self):
        import subprocess
        pid = os.getpid()
        try:
            out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                                  "--format=csv,noheader,nounits"], capture_output=True, text=True,
                                 timeout=20).stdout
            for line in out.splitlines():
                parts = [s.strip() for s in line.split(",")]
                if len(parts) == 2 and parts[0] == str(pid):
                    self.how = "nvidia-smi per-process"
                    return float(parts[1])
            out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True, timeout=20).stdout
            self.how = "nvidia-smi device used (whole GPU)"
            return float(out.splitlines()[0])
        except Exception:
            self.how = "unavailable"
            return float("nan")


def sample(gm, i, t0):
    return {"run": i, "host_rss_mib": round(host_rss_kib() / 1024, 1), "device_mib": round(gm.mib(), 1),
            "t_s": round(time.time() - t0, 2)}


def cmd_leak(a):
    import numpy as np
    import onnxruntime as ort
    res = {"check": "leak", "runs": a.runs, "pass": False}
    model = a.model
    if not model or not os.path.exists(model):
        model = os.path.join(a.work or "/tmp", "leak_conv.onnx")
        small_conv_model(model)
        res["model_note"] = "small Conv-Relu-Conv model built here (no exported model given)"
    res["model"] = model
    try:
        hdep.register(ort)
        dev = hdep.gpu_device(ort)
        sess = hdep.ep_session(ort, model, dev)
    except Exception as e:
        res["error"] = str(e)
        log(f"FAIL: {e}")
        write_json(a.json, res)
        return 2
    res["placement"] = hdep.placement(sess)
    log(f"model {model}: " + hdep.placement_str(res["placement"]))
    inp = sess.get_inputs()[0]
    batches = a.batches or [a.batch]
    xs = []
    for b in batches:
        shape = [d if isinstance(d, int) and d > 0 else (b if i == 0 else 1) for i, d in enumerate(inp.shape)]
        xs.append(np.random.default_rng(7 + b).standard_normal(shape, dtype=np.float32))
    res["threads"], res["batches"] = a.threads, batches
    gm = GpuMem()
    samples = []
    # warm-up: every shape once per thread's worth of concurrency, so plans
    # and per-run instances exist before the baseline sample
    warm = min(max(100, a.runs // 10), a.runs)
    at = {1, 10, warm, a.runs} | set(range(warm, a.runs + 1, max(100, a.runs // 20)))
    t0 = time.time()
    import threading
    lock = threading.Lock()
    state = {"done": 0, "error": None}

    def worker(t):
        k = t
        while True:
            with lock:
                if state["done"] >= a.runs or state["error"]:
                    return
                state["done"] += 1
            try:
                sess.run(None, {inp.name: xs[k % len(xs)]})
            except Exception as e:
                with lock:
                    state["error"] = state["error"] or str(e)
                return
            k += 1

    try:
        if a.threads <= 1:
            for i in range(1, a.runs + 1):
                sess.run(None, {inp.name: xs[i % len(xs)]})
                if i in at:
                    samples.append(sample(gm, i, t0))
        else:
            ths = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(a.threads)]
            for t in ths:
                t.start()
            seen = set()
            while any(t.is_alive() for t in ths):
                time.sleep(0.05)
                with lock:
                    done = state["done"]
                for i in sorted(at):
                    if i <= done and i not in seen:
                        seen.add(i)
                        samples.append(sample(gm, i, t0))
            for t in ths:
                t.join()
            if state["error"]:
                raise RuntimeError(state["error"])
            if a.runs not in seen:
                samples.append(sample(gm, a.runs, t0))
        for s in samples:
            if s["run"] in (1, warm, a.runs) or s["run"] % 1000 == 0:
                log(f"  run {s['run']:6d}: host RSS {s['host_rss_mib']:9.1f} MiB, device {s['device_mib']:9.1f} MiB")
    except Exception as e:
        res["error"] = f"run: {e}"
        res["samples"] = samples
        log(f"FAIL: {res['error']}")
        write_json(a.json, res)
        return 1
    res["samples"] = samples
    res["device_mem_source"] = gm.how
    base = next(s for s in samples if s["run"] >= warm)
    last = samples[-1]

    def growth(k):
        b, l = base[k], last[k]
        return (l - b) / b if b and b == b and l == l else 0.0

    res["host_growth"] = growth("host_rss_mib")
    res["device_growth"] = growth("device_mib")
    dev_ok = base["device_mib"] == base["device_mib"] and last["device_mib"] == last["device_mib"]  # not NaN
    res["pass"] = res["host_growth"] <= 0.05 and res["device_growth"] <= 0.05 and dev_ok
    if not dev_ok:
        log("device memory could not be measured (no pynvml / nvidia-smi): the check cannot pass")
    log(f"host RSS run {base['run']}: {base['host_rss_mib']} MiB -> run {last['run']}: {last['host_rss_mib']} MiB "
        f"({res['host_growth'] * 100:+.2f}%)")
    log(f"device   run {base['run']}: {base['device_mib']} MiB -> run {last['run']}: {last['device_mib']} MiB "
        f"({res['device_growth'] * 100:+.2f}%, {gm.how})")
    del sess
    gc.collect()
    res["device_mib_after_release"] = round(gm.mib(), 1)
    log(f"device after the session is released: {res['device_mib_after_release']} MiB")
    res["runs_per_s"] = round(a.runs / max(time.time() - t0, 1e-9), 1)
    log(("PASS" if res["pass"] else "FAIL") + f": growth > 5% flags a leak ({a.runs} runs, {res['runs_per_s']} runs/s)")
    write_json(a.json, res)
    return 0 if res["pass"] else 1


# ---- out of memory --------------------------------------------------------------

def cmd_oom(a):
    import numpy as np
    import onnxruntime as ort
    res = {"check": "oom", "limit_mb": a.limit_mb, "big": a.big, "pass": False}
    os.makedirs(a.work, exist_ok=True)
    path = os.path.join(a.work, "resnet50.onnx")
    if not os.path.exists(path):
        hdep.export_torchvision("resnet50", path)
    hdep.register(ort)
    dev = hdep.gpu_device(ort)
    limit = a.limit_mb << 20
    sess = hdep.ep_session(ort, path, dev, provider_options={"gpu_mem_limit": str(limit)})
    cpu = hdep.cpu_session(ort, path)
    inp = sess.get_inputs()[0].name
    rng = np.random.default_rng(5)
    small = rng.standard_normal((1, 3, 224, 224), dtype=np.float32)
    big = rng.standard_normal((a.big, 3, 224, 224), dtype=np.float32)
    ok = True
    res["rounds"] = []
    for r in range(2):
        row = {}
        try:
            sess.run(None, {inp: big})
            row["big"] = "ran (the limit did not bite: raise --big)"
            ok = False
        except Exception as e:
            msg = str(e)
            row["big"] = msg[:600]
            names = "gpu_mem_limit" in msg or str(limit) in msg
            row["big_names_limit"] = names
            ok &= names
        got = sess.run(None, {inp: small})[0]
        c = hdep.compare(got, cpu.run(None, {inp: small})[0])
        row["small_after"] = c
        row["providers_after"] = sess.get_providers()
        ok &= c["pass"] and hdep.EP_NAME in row["providers_after"]
        res["rounds"].append(row)
        log(f"round {r}: batch {a.big} -> {row['big'][:300]}")
        log(f"round {r}: batch 1 afterwards: {hdep.compare_str(c)} on {row['providers_after']}")
    res["pass"] = ok
    log(("PASS" if ok else "FAIL") + f": gpu_mem_limit={a.limit_mb} MiB, batch {a.big} refused with the limit named, "
        "batch 1 right afterwards")
    write_json(a.json, res)
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("model")
    m.add_argument("--work", required=True, help="folder for the exported model")
    m.add_argument("--model", default="resnet50")
    m.add_argument("--batches", type=int, nargs="+", default=[1, 8])
    m.add_argument("--opset", type=int, default=17)
    m.add_argument("--iters", type=int, default=10, help="timed runs per batch (info only)")
    m.add_argument("--opt-level", default="all", choices=["all", "extended", "basic", "none"])
    m.add_argument("--force", action="store_true", help="export even when the file exists")
    m.add_argument("--json")
    lk = sub.add_parser("leak")
    lk.add_argument("--model", help="ONNX file (default: a small Conv model built here)")
    lk.add_argument("--work", help="folder for the built model")
    lk.add_argument("--runs", type=int, default=1000)
    lk.add_argument("--batch", type=int, default=1)
    lk.add_argument("--batches", type=int, nargs="+", help="cycle these batch sizes (mixed shapes)")
    lk.add_argument("--threads", type=int, default=1)
    lk.add_argument("--json")
    om = sub.add_parser("oom")
    om.add_argument("--work", required=True)
    om.add_argument("--limit-mb", type=int, default=600)
    om.add_argument("--big", type=int, default=256)
    om.add_argument("--json")
    a = ap.parse_args()
    return {"model": cmd_model, "leak": cmd_leak, "oom": cmd_oom}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
