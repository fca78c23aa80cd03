#!/usr/bin/env python3
"""Benchmarks HipDNNExecutionProvider against torch and ONNX Runtime's CPU EP
on torchvision models (GPU machine; bench/run.sh is the entry point).

For each model (random weights, exported at opset 17 with a dynamic batch) and
each batch size, in one process:
  ours, device I/O  ORT + our EP, inputs/outputs already on the GPU (IOBinding)
  ours, host I/O    ORT + our EP, numpy in and out (copies included)
  ORT CPU EP        ORT's CPU EP (timing skipped where it would be too slow)
  torch eager       torch fp32 on CUDA (TF32 convolutions: torch's default)
  torch graph       the same model captured in one torch.cuda.CUDAGraph
and, unless --no-fp16, in half precision:
  ours fp16         ORT + our EP with provider option precision=fp16, device
                    I/O (host I/O when no device I/O way works); --fp16-option
                    KEY=VALUE gives that session another option
  torch graph fp16  the model in fp16 (.half()) captured in one CUDA graph
Medians of wall time with the GPU synchronised, over --iters runs after
--warmup runs; the two fp16 columns are timed taking turns, --rounds times
(default 3), each the least of its round medians, as bench/tx_bench.py
does (what drifts over a process lands on both sides of their ratio). Our
outputs are checked against the CPU EP (rel L2 < 1e-2; the fp16 ones
against the same fp32 CPU EP output): a FAIL row reports no speed of ours
("—").

Device memory, one method for both (see MEMORY_METHOD): each side's caching
allocator at its peak plus the CUDA context. Ours: the EP's pool peak
(weights, run buffers, ONNX Runtime's tensors on the GPU), from
build/bin/hipdnn-ep-run's --json report of the same model and batch in a
process of its own (so no other session shares the pool). Torch eager:
torch.cuda.max_memory_reserved() over its eager runs. The context: total
minus free device memory once torch has created its context, before any
allocation of note, measured once and added to both.

Writes OUT/benchmarks.md (table) and OUT/bench-<date>.json (raw numbers),
rewritten after every row so a run cut short still leaves its rows.
"""
import argparse
import copy
import datetime
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hdep  # noqa: E402
from hdep import log  # noqa: E402

DASH = "—"

# Ways to hand our EP inputs/outputs that are already on the GPU, in order of
# preference. The first whose output matches the CPU EP in a probe process
# (a crash there costs nothing) is used for the "device I/O" column.
IO_STRATEGIES = ["ortvalue-gpu-vendor", "torch-ptr-cuda", "torch-ptr-gpu-vendor"]

MEMORY_METHOD = ("device memory = the caching allocator's peak + the CUDA context, for both: ours = the EP's pool "
                 "peak (weights, run buffers, ORT's tensors on the GPU; hipdnn-ep-run --json in a process of its "
                 "own), torch eager = torch.cuda.max_memory_reserved(); context = total - free after torch created "
                 "its context, measured once")
MIB = float(1 << 20)


# ---- timing -------------------------------------------------------------------

median, time_fn = hdep.median, hdep.time_fn


# ---- device I/O binding for our EP ----------------------------------------------

class DeviceIO:
    """An IOBinding of one input and all outputs on the GPU, made one of the
    IO_STRATEGIES ways. run() runs; fetch() copies the outputs to numpy."""

    def __init__(self, strategy, ort, torch, np, sess, x, out_shapes):
        self.strategy = strategy
        inp = sess.get_inputs()[0].name
        outs = [o.name for o in sess.get_outputs()]
        # the outputs' element types (an fp16 export's are fp16)
        odt = [np.float16 if o.type == "tensor(float16)" else np.float32 for o in sess.get_outputs()]
        io = sess.io_binding()
        self.keep = []
        if strategy == "ortvalue-gpu-vendor":
            xv = ort.OrtValue.ortvalue_from_numpy(x, "gpu", 0, hdep.NVIDIA)
            ovs = [ort.OrtValue.ortvalue_from_shape_and_type(list(s), t, "gpu", 0, hdep.NVIDIA)
                   for s, t in zip(out_shapes, odt)]
            io.bind_ortvalue_input(inp, xv)
            for n, ov in zip(outs, ovs):
                io.bind_ortvalue_output(n, ov)
            self.keep = [xv] + ovs

            def fetch():
                try:  # the session's data transfer (our EP's copy)
                    return list(io.copy_outputs_to_cpu())
                except Exception:
                    return [ov.numpy() for ov in ovs]
            self._fetch = fetch
        elif strategy in ("torch-ptr-cuda", "torch-ptr-gpu-vendor"):
            tx = torch.from_numpy(x).cuda()
            tdt = {np.float16: torch.float16, np.float32: torch.float32}
            tys = [torch.empty(tuple(s), dtype=tdt[t], device="cuda") for s, t in zip(out_shapes, odt)]
            if strategy == "torch-ptr-cuda":
                io.bind_input(inp, "cuda", 0, x.dtype.type, list(x.shape), tx.data_ptr())
                for n, t, e in zip(outs, tys, odt):
                    io.bind_output(n, "cuda", 0, e, list(t.shape), t.data_ptr())
            else:  # an OrtValue over torch's memory, device named by vendor id
                dev = ort.OrtDevice.make("gpu", 0, hdep.NVIDIA)
                io._iobinding.bind_input(inp, dev._get_c_device(), x.dtype.type, list(x.shape), tx.data_ptr())
                for n, t, e in zip(outs, tys, odt):
                    io._iobinding.bind_output(n, dev._get_c_device(), e, list(t.shape), t.data_ptr())
            self.keep = [tx] + tys
            self._fetch = lambda: [t.cpu().numpy() for t in tys]
        else:
            raise ValueError(strategy)
        self.io = io
        self.sess = sess

    def run(self):
        self.sess.run_with_iobinding(self.io)

    def fetch(self):
        return self._fetch()


def probe_strategy(strategy, timeout=120):
    """Runs `bench.py --probe STRATEGY` in a child: True when it worked."""
    cmd = [sys.executable, os.path.abspath(__file__), "--probe", strategy]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, "probe timed out"
    lines = [ln.strip() for ln in (p.stdout + p.stderr).splitlines() if ln.strip()]
    why = lines[-1] if lines else f"exit {p.returncode}"
    if p.returncode < 0:
        why = f"crashed (signal {-p.returncode}); last line: {why}"
    return p.returncode == 0, why[:400]


def run_probe(strategy):
    """Child side: a small Conv model, the strategy, output vs the CPU EP."""
    import numpy as np
    import onnxruntime as ort
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from ep_check import small_conv_model
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"hdep_probe_{os.getpid()}.onnx")
    small_conv_model(path)
    hdep.register(ort)
    dev = hdep.gpu_device(ort)
    sess = hdep.ep_session(ort, path, dev)
    cpu = hdep.cpu_session(ort, path)
    x = np.random.default_rng(3).standard_normal((2, 16, 56, 56), dtype=np.float32)
    ref = cpu.run(None, {"input": x})
    d = DeviceIO(strategy, ort, torch, np, sess, x, [r.shape for r in ref])
    for _ in range(2):
        d.run()
    torch.cuda.synchronize()
    got = d.fetch()
    c = hdep.compare(got[0], ref[0])
    os.remove(path)
    print(f"probe {strategy}: {hdep.compare_str(c)}")
    return 0 if c["pass"] else 1


# ---- device memory ------------------------------------------------------------

def cuda_context_bytes(torch):
    """Device memory in use once torch has created its CUDA context and made
    one small allocation, less what torch's allocator holds: the context."""
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    return total - free - torch.cuda.memory_reserved()


def ep_memory(path, batch, timeout=300, extra=()):
    """Our EP's memory figures for one model and batch: hipdnn-ep-run's --json
    report (its 'memory' object), run in a process of its own. None, with a
    reason, when the tool is missing or fails."""
    import tempfile
    tool = os.path.join(hdep.REPO, "build", "bin", "hipdnn-ep-run")
    if not os.path.exists(tool):
        return None, f"{tool} not found"
    env = dict(os.environ)
    ort_lib = env.get("HIPDNN_EP_ORT_LIB") or hdep.ort_capi_lib() or \
        os.path.join(hdep.REPO, "third_party", "ort-1.29", "lib", "libonnxruntime.so")
    env["HIPDNN_EP_ORT_LIB"] = ort_lib
    env.setdefault("HIPDNN_EP_LIB", hdep.ep_lib_path())
    fd, out = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    cmd = [tool, path, "--batch", str(batch), "--iters", "2", "--compare", "none", "--json", out, *extra]
    mem = None
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        if p.returncode == 0:
            with open(out) as f:
                mem = json.load(f).get("memory")
    except (OSError, ValueError, subprocess.TimeoutExpired) as e:
        return None, f"hipdnn-ep-run: {e}"
    finally:
        os.remove(out)
    if not isinstance(mem, dict):
        tail = (p.stdout + p.stderr).strip().splitlines()[-1:] or [f"exit {p.returncode}"]
        return None, f"hipdnn-ep-run exited {p.returncode} without memory figures: {tail[0][:300]}"
    if mem.get("memory") != "device" or mem.get("pool_peak_bytes") is None:
        return None, f"hipdnn-ep-run reported {mem.get('memory')} memory (backend {mem.get('backend')}), not the GPU's"
    return mem, None


# ---- one model ----------------------------------------------------------------

def fmt_ms(v):
    return DASH if v is None else (f"{v:.2f}" if v < 100 else f"{v:.0f}")


def time_turns(row, fns, a, sync):
    """row's times of fns (key -> fn), taking turns a.rounds times
    (hdep.take_turns), each the least of its round medians; empties fns."""
    if not fns:
        return
    try:
        ts = hdep.take_turns(fns, a.iters, a.rounds, sync, warmup=a.warmup)
    finally:
        fns.clear()
    for k, v in ts.items():
        row["times"][k] = {"median_ms": min(v), "round_medians_ms": v}
    log(f"[{row['model']} b{row['batch']}] taking turns, {a.rounds} rounds: " +
        ", ".join(f"{k} {[round(x, 3) for x in v]}" for k, v in ts.items()))


def bench_model(name, a, ctx, emit):
    import numpy as np
    import onnxruntime as ort
    import torch
    path = os.path.join(a.work, f"{name}{'-bncal' if a.calibrate_bn else ''}.onnx")
    info = {"model": name, "calibrate_bn": a.calibrate_bn}
    tmodel = hdep.build_torchvision(name, seed=0, calibrate_bn=a.calibrate_bn)
    if not os.path.exists(path) or a.force_export:
        log(f"[{name}] exporting (opset {a.opset}, dynamic batch) ...")
        info["export"] = hdep.export_model(tmodel, path, opset=a.opset, name=name)
        log(f"[{name}]   {info['export']['exporter']} exporter, opset {info['export']['opset']}, "
            f"{info['export']['seconds']} s")
    else:
        info["export"] = {"path": path, "reused": True}
    cpu = hdep.cpu_session(ort, path)
    ep = ep16 = None
    if ctx["dev"] is not None and not a.no_fp16:
        try:
            t = time.time()
            ep16 = hdep.ep_session(ort, path, ctx["dev"],
                                   dict({"precision": "fp16"}, **hdep.options_dict(a.fp16_option)))
            info["ep_fp16_session_s"] = round(time.time() - t, 2)
        except Exception as e:
            info["ep_fp16_error"] = str(e)
            log(f"[{name}] our precision=fp16 session failed: {e}")
    if ctx["dev"] is not None:
        try:
            t = time.time()
            ep = hdep.ep_session(ort, path, ctx["dev"])
            info["ep_session_s"] = round(time.time() - t, 2)
            info["placement"] = hdep.placement(ep)
            log(f"[{name}] {hdep.placement_str(info['placement'])} (session {info['ep_session_s']} s)")
        except Exception as e:
            info["ep_error"] = str(e)
            log(f"[{name}] our EP session failed: {e}")
    inp = cpu.get_inputs()[0].name
    tm = tmodel.cuda()
    sync = torch.cuda.synchronize
    rng = np.random.default_rng(1234)
    for b in a.batches:
        if time.time() - ctx["t0"] > a.budget_s:
            ctx["notes"].append(f"{name} batch {b}: skipped (time budget of {a.budget_s} s spent)")
            log(ctx["notes"][-1])
            continue
        x = rng.standard_normal((b, 3, 224, 224), dtype=np.float32)
        row = {"model": name, "batch": b, "placement": info.get("placement", {"unknown": "no EP session"}),
               "times": {}, "checks": {}, "notes": []}
        if ep is None:
            row["notes"].append("our EP did not run: " + info.get("ep_error", "no GPU device of our EP"))
        t = time.perf_counter()
        ref = cpu.run(None, {inp: x})
        one_cpu_s = time.perf_counter() - t
        # ORT CPU EP
        if one_cpu_s * (a.iters + a.warmup) <= a.cpu_max_s:
            row["times"]["ort_cpu"] = time_fn(lambda: cpu.run(None, {inp: x}), a.iters, a.warmup, lambda: None)
        else:
            n = max(3, int(a.cpu_max_s / max(one_cpu_s, 1e-6)) - 1)
            if n >= 10:
                row["times"]["ort_cpu"] = time_fn(lambda: cpu.run(None, {inp: x}), n, 1, lambda: None)
                row["notes"].append(f"ORT CPU EP: {n} runs (slow: {one_cpu_s * 1e3:.0f} ms each)")
            else:
                row["notes"].append(f"ORT CPU EP: not timed (slow: {one_cpu_s * 1e3:.0f} ms a run)")
        # ours, host I/O
        if ep is not None:
            try:
                got = ep.run(None, {inp: x})
                row["checks"]["ours_host"] = c = hdep.compare(got[0], ref[0])
                log(f"[{name} b{b}] ours host I/O vs CPU EP: {hdep.compare_str(c)}")
                if c["pass"]:
                    row["times"]["ours_host"] = time_fn(lambda: ep.run(None, {inp: x}), a.iters, a.warmup, sync)
            except Exception as e:
                row["checks"]["ours_host"] = {"pass": False, "why": f"run failed: {e}"}
                log(f"[{name} b{b}] ours host I/O: run failed: {e}")
            # ours, device I/O
            if ctx["io"]:
                try:
                    d = DeviceIO(ctx["io"], ort, torch, np, ep, x, [r.shape for r in ref])
                    d.run()
                    sync()
                    c = hdep.compare(d.fetch()[0], ref[0])
                    row["checks"]["ours_device"] = c
                    log(f"[{name} b{b}] ours device I/O ({ctx['io']}) vs CPU EP: {hdep.compare_str(c)}")
                    if c["pass"]:
                        row["times"]["ours_device"] = time_fn(d.run, a.iters, a.warmup, sync)
                    del d
                except Exception as e:
                    row["checks"]["ours_device"] = {"pass": False, "why": f"run failed: {e}"}
                    log(f"[{name} b{b}] ours device I/O: run failed: {e}")
        # ours, precision=fp16
        turns16 = {}
        if ep16 is not None:
            try:
                if ctx["io"]:
                    d = DeviceIO(ctx["io"], ort, torch, np, ep16, x, [r.shape for r in ref])
                    run16, fetch16 = d.run, d.fetch
                else:
                    run16 = lambda: ep16.run(None, {inp: x})  # noqa: E731
                    fetch16 = run16
                run16()
                sync()
                c = hdep.compare(fetch16()[0], ref[0])
                row["checks"]["ours_fp16"] = c
                log(f"[{name} b{b}] ours precision=fp16 vs CPU EP (fp32): {hdep.compare_str(c)}")
                if c["pass"]:
                    turns16["ours_fp16"] = run16  # timed with torch's fp16 graph below
                del fetch16
            except Exception as e:
                row["checks"]["ours_fp16"] = {"pass": False, "why": f"run failed: {e}"}
                log(f"[{name} b{b}] ours precision=fp16: run failed: {e}")
        elif "ep_fp16_error" in info:
            row["checks"]["ours_fp16"] = {"pass": False, "why": "session failed: " + info["ep_fp16_error"][:300]}
        # our device memory (a process of its own)
        mem = {"method": MEMORY_METHOD, "context_bytes": ctx.get("context_bytes")}
        if ep is not None and not a.no_memory:
            ours, why = ep_memory(path, b)
            mem["ours"] = ours
            if why:
                row["notes"].append(f"our device memory: {why}")
                log(f"[{name} b{b}] our device memory: {why}")
        # torch
        with torch.no_grad():
            tx = torch.from_numpy(x).cuda()
            sync()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            y = tm(tx)
            sync()
            row["checks"]["torch_eager"] = hdep.compare(y.float().cpu().numpy(), ref[0])
            row["times"]["torch_eager"] = time_fn(lambda: tm(tx), a.iters, a.warmup, sync)
            mem["torch_eager"] = {"max_memory_reserved_bytes": torch.cuda.max_memory_reserved(),
                                  "max_memory_allocated_bytes": torch.cuda.max_memory_allocated()}
            row["memory"] = mem
            log(f"[{name} b{b}] device memory: {memory_str(mem)}")
            try:
                static_x = tx.clone()
                g, static_y = hdep.torch_capture(torch, tm, static_x)
                g.replay()
                sync()
                row["checks"]["torch_graph"] = hdep.compare(static_y.float().cpu().numpy(), ref[0])
                row["times"]["torch_graph"] = time_fn(g.replay, a.iters, a.warmup, sync)
                del g, static_y, static_x
            except Exception as e:
                row["notes"].append(f"torch CUDA graph failed: {e}")
                log(f"[{name} b{b}] torch CUDA graph failed: {e}")
            if not a.no_fp16:
                try:
                    tm16 = copy.deepcopy(tm).half()
                    static_x = tx.half()
                    g, static_y = hdep.torch_capture(torch, tm16, static_x)
                    g.replay()
                    sync()
                    row["checks"]["torch_graph_fp16"] = hdep.compare(static_y.float().cpu().numpy(), ref[0])
                    turns16["torch_graph_fp16"] = g.replay
                    time_turns(row, turns16, a, sync)
                    del g, static_y, static_x, tm16
                except Exception as e:
                    row["notes"].append(f"torch fp16 CUDA graph failed: {e}")
                    log(f"[{name} b{b}] torch fp16 CUDA graph failed: {e}")
            try:
                time_turns(row, turns16, a, sync)  # ours alone, where torch's fp16 graph is not
            except Exception as e:
                row["notes"].append(f"ours fp16 timing failed: {e}")
                log(f"[{name} b{b}] ours fp16 timing failed: {e}")
            del tx, y
        torch.cuda.empty_cache()
        emit(info, row)
    del ep, ep16, cpu, tm
    torch.cuda.empty_cache()


# ---- report -------------------------------------------------------------------

def ours_ms(row):
    """Our time for the ratios: device I/O when it was measured, else host I/O."""
    t = row["times"]
    for k in ("ours_device", "ours_host"):
        if k in t and t[k]["median_ms"] is not None:
            return t[k]["median_ms"], k
    return None, None


def row_status(row):
    ch = row["checks"]
    ours = [ch[k] for k in ("ours_host", "ours_device") if k in ch]
    if not ours:
        return "FAIL"  # our EP did not run (no GPU device, session failed): see the notes
    return "PASS" if all(c["pass"] for c in ours) else "FAIL"


def fp16_status(row):
    c = row["checks"].get("ours_fp16")
    return None if c is None else ("PASS" if c["pass"] else "FAIL")


def memory_mib(mem):
    """(ours, torch eager) device MiB of a row's memory record, None where unknown."""
    ctx = mem.get("context_bytes") or 0
    o = mem.get("ours")
    t = mem.get("torch_eager")
    ours = (o["pool_peak_bytes"] + ctx) / MIB if o and o.get("pool_peak_bytes") is not None else None
    torch_ = (t["max_memory_reserved_bytes"] + ctx) / MIB if t else None
    return ours, torch_


def memory_str(mem):
    ours, torch_ = memory_mib(mem)
    o = mem.get("ours") or {}
    parts = [f"ours {ours:.0f} MiB (weights {o['weights_bytes'] / MIB:.0f}, run buffers "
             f"{o['run_buffers_bytes'] / MIB:.0f})" if ours is not None else "ours —",
             f"torch eager {torch_:.0f} MiB" if torch_ is not None else "torch eager —",
             f"context {(mem.get('context_bytes') or 0) / MIB:.0f} MiB included"]
    return ", ".join(parts)


def markdown(meta, rows):
    L = []
    L.append("# hipdnn-ep benchmarks")
    L.append("")
    L.append(f"- date: {meta['date']}")
    L.append(f"- GPU: {meta['gpu']}")
    v = meta["versions"]
    L.append(f"- torch {v.get('torch')} (CUDA {v.get('cuda_torch')}, cuDNN {v.get('cudnn_torch')}), "
             f"torchvision {v.get('torchvision')}, onnxruntime {v.get('onnxruntime')}, onnx {v.get('onnx')}, "
             f"numpy {v.get('numpy')}, Python {v.get('python')}")
    L.append(f"- our EP: {meta.get('ep_device', 'not available')}; device I/O: {meta.get('io') or 'not available'}")
    if meta.get("fp16_options") or meta.get("calibrate_bn"):
        L.append(f"- batch norms calibrated: {bool(meta.get('calibrate_bn'))}; ours fp16's other provider options: "
                 f"{', '.join(meta.get('fp16_options') or []) or 'none'}")
    L.append(f"- medians of wall time (GPU synchronised) over {meta['iters']} runs after {meta['warmup']} "
             f"warm-up runs (the fp16 columns: the least of {meta.get('rounds', 1)} such medians, taken in turns); "
             f"fp32 (TF32 convolutions in ours and in torch); ORT graph optimisation level: all")
    L.append("")
    L.append("| model | batch | ours vs CPU EP | nodes on our EP | ours, device I/O (ms) | ours, host I/O (ms) "
             "| ORT CPU EP (ms) | torch eager (ms) | torch graph (ms) | speed-up vs torch eager "
             "| ratio to torch graph |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        t = r["times"]
        st = row_status(r)
        ok = st == "PASS"

        def tm(k, ours=False):
            if ours and not ok:
                return DASH
            return fmt_ms(t[k]["median_ms"]) if k in t else DASH

        o, _ = ours_ms(r)
        e = t.get("torch_eager", {}).get("median_ms")
        g = t.get("torch_graph", {}).get("median_ms")
        sp = f"{e / o:.2f}x" if ok and o and e else DASH
        ra = f"{o / g:.2f}" if ok and o and g else DASH
        L.append(f"| {r['model']} | {r['batch']} | {st} | {hdep.placement_cell(r['placement'])} | "
                 f"{tm('ours_device', True)} | {tm('ours_host', True)} | {tm('ort_cpu')} | {tm('torch_eager')} | "
                 f"{tm('torch_graph')} | {sp} | {ra} |")
    L.append("")
    L.append("Columns: *ours* = ONNX Runtime + HipDNNExecutionProvider (device I/O: input and output "
             "bound on the GPU with IOBinding; host I/O: numpy in/out, copies included). *speed-up vs torch "
             "eager* = torch eager / ours; *ratio to torch graph* = ours / torch graph (below 1 = faster than "
             "torch's whole-model CUDA graph); both use device I/O where measured. A FAIL row reports none of "
             "our times.")
    hrows = [r for r in rows if fp16_status(r) is not None or "torch_graph_fp16" in r["times"]]
    if hrows:
        L.append("")
        L.append("Half precision: *ours fp16* = provider option precision=fp16 on the same fp32 model (weights "
                 "converted once, fp32 at the partition's input and output; device I/O where measured), checked "
                 "against the CPU EP's fp32 output (rel L2 < 1e-2); *torch graph fp16* = the model in fp16 "
                 "(.half()) in one CUDA graph. Ratios below 1: ours faster.")
        L.append("")
        L.append("| model | batch | ours fp16 vs CPU EP (rel L2) | ours fp16 (ms) | torch graph fp16 (ms) "
                 "| ours fp16 / torch graph fp16 | ours fp32 / ours fp16 |")
        L.append("|---|---|---|---|---|---|---|")
        for r in hrows:
            t = r["times"]
            c = r["checks"].get("ours_fp16")
            st = fp16_status(r) or DASH
            if c and "rel_l2" in c:
                st += f" {c['rel_l2']:.1e}"
            o16 = t.get("ours_fp16", {}).get("median_ms") if st.startswith("PASS") else None
            g16 = t.get("torch_graph_fp16", {}).get("median_ms")
            o32, _ = ours_ms(r)
            L.append(f"| {r['model']} | {r['batch']} | {st} | {fmt_ms(o16)} | {fmt_ms(g16)} | "
                     f"{f'{o16 / g16:.2f}' if o16 and g16 else DASH} | "
                     f"{f'{o32 / o16:.2f}x' if o16 and o32 and row_status(r) == 'PASS' else DASH} |")
    mrows = [r for r in rows if r.get("memory")]
    if mrows:
        L.append("")
        L.append("Device memory (MiB): " + MEMORY_METHOD + ".")
        L.append("")
        L.append("| model | batch | ours | of which weights | of which run buffers | torch eager | ours / torch eager |")
        L.append("|---|---|---|---|---|---|---|")
        for r in mrows:
            ours, torch_ = memory_mib(r["memory"])
            o = r["memory"].get("ours") or {}
            cell = (lambda v: DASH if v is None else f"{v:.0f}")
            w = o.get("weights_bytes")
            rb = o.get("run_buffers_bytes")
            L.append(f"| {r['model']} | {r['batch']} | {cell(ours)} | {cell(w / MIB if w is not None else None)} | "
                     f"{cell(rb / MIB if rb is not None else None)} | {cell(torch_)} | "
                     f"{f'{ours / torch_:.2f}' if ours and torch_ else DASH} |")
    notes = list(meta.get("notes", []))
    placed = set()
    for r in rows:
        for c in ("ours_host", "ours_device", "ours_fp16", "torch_eager", "torch_graph", "torch_graph_fp16"):
            ch = r["checks"].get(c)
            if ch and (c.startswith("ours") or not ch["pass"]):
                notes.append(f"{r['model']} b{r['batch']} {c} vs CPU EP: {hdep.compare_str(ch)}")
        for n in r["notes"]:
            notes.append(f"{r['model']} b{r['batch']}: {n}")
        if "unknown" not in r["placement"] and r["model"] not in placed:
            placed.add(r["model"])
            p = hdep.placement_str(r["placement"])
            if "elsewhere" in p:
                notes.append(f"{r['model']}: {p}")
    if notes:
        L.append("")
        L.append("Notes:")
        L.extend(f"- {n}" for n in notes)
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", default=["resnet50", "mobilenet_v2"])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 32])
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3, help="turns of the two fp16 columns (least median kept)")
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--work", default=os.environ.get("TMPDIR", "/tmp") + "/hipdnn-bench")
    ap.add_argument("--out", default=os.environ.get("OUT") or "bench-out")
    ap.add_argument("--budget-s", type=float, default=420, help="no new (model, batch) starts after this")
    ap.add_argument("--cpu-max-s", type=float, default=12, help="most seconds spent timing the CPU EP per row")
    ap.add_argument("--force-export", action="store_true")
    ap.add_argument("--calibrate-bn", action="store_true",
                    help="batch-norm statistics from random batches, so every layer carries signal (hdep.build_torchvision)")
    ap.add_argument("--io", choices=IO_STRATEGIES + ["auto", "none"], default="auto",
                    help="how device I/O binds (auto: probe each in a child process)")
    ap.add_argument("--probe", choices=IO_STRATEGIES, help=argparse.SUPPRESS)
    ap.add_argument("--no-memory", action="store_true", help="skip our device memory (a hipdnn-ep-run per row)")
    ap.add_argument("--no-fp16", action="store_true", help="skip ours with precision=fp16 and torch's fp16 graph")
    ap.add_argument("--fp16-option", metavar="KEY=VALUE", action="append", default=[], type=hdep.key_value,
                    help="another provider option of ours with precision=fp16 (repeatable; e.g. fp32_first_layers=6)")
    a = ap.parse_args()
    if a.probe:
        return run_probe(a.probe)

    t0 = time.time()
    import onnxruntime as ort
    import torch
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    meta = {"date": now.strftime("%Y-%m-%d %H:%M UTC"), "gpu": hdep.gpu_name(), "versions": hdep.versions(),
            "iters": a.iters, "warmup": a.warmup, "rounds": a.rounds, "models": a.models, "batches": a.batches,
            "notes": [], "fp16_options": a.fp16_option, "calibrate_bn": a.calibrate_bn}
    if not torch.cuda.is_available():
        log("FAIL: torch sees no CUDA device")
        return 2
    log(f"GPU: {meta['gpu']}; {meta['versions']}")
    ctx = {"t0": t0, "notes": meta["notes"], "dev": None, "io": None}
    # Before our EP loads (its module shares the process's context).
    ctx["context_bytes"] = meta["cuda_context_bytes"] = cuda_context_bytes(torch)
    log(f"CUDA context: {ctx['context_bytes'] / MIB:.0f} MiB")
    try:
        hdep.register(ort)
        ctx["dev"] = hdep.gpu_device(ort)
        meta["ep_device"] = hdep.describe_device(ctx["dev"])
        log("our device: " + meta["ep_device"])
    except Exception as e:
        meta["notes"].append(f"our EP: {e}")
        log(f"our EP unavailable: {e}")
    if ctx["dev"] is not None and a.io != "none":
        tried = [a.io] if a.io != "auto" else IO_STRATEGIES
        for s in tried:
            ok, why = probe_strategy(s)
            log(f"device I/O probe {s}: {'works' if ok else 'no'} ({why})")
            if ok:
                ctx["io"] = s
                break
            meta["notes"].append(f"device I/O way '{s}' did not work: {why}")
        if not ctx["io"]:
            meta["notes"].append("no device I/O way worked: only host I/O times for ours")
    meta["io"] = ctx["io"]

    stamp = now.strftime("%Y%m%d-%H%M")
    json_path = os.path.join(a.out, f"bench-{stamp}.json")
    md_path = os.path.join(a.out, "benchmarks.md")
    rows = []
    infos = {}

    def emit(info, row):
        rows.append(row)
        infos[info["model"]] = info
        o, k = ours_ms(row)
        t = row["times"]
        log(f"[{row['model']} b{row['batch']}] {row_status(row)}: ours {fmt_ms(o)} ms ({k}), "
            f"cpu {fmt_ms(t.get('ort_cpu', {}).get('median_ms'))}, eager {fmt_ms(t.get('torch_eager', {}).get('median_ms'))}, "
            f"graph {fmt_ms(t.get('torch_graph', {}).get('median_ms'))}")
        save()

    def save():
        meta["wall_s"] = round(time.time() - t0, 1)
        with open(json_path, "w") as f:
            json.dump({"meta": meta, "models": infos, "rows": rows}, f, indent=2, default=str)
        with open(md_path, "w") as f:
            f.write(markdown(meta, rows))

    save()
    for name in a.models:
        if time.time() - t0 > a.budget_s:
            meta["notes"].append(f"{name}: skipped (time budget of {a.budget_s} s spent)")
            continue
        try:
            bench_model(name, a, ctx, emit)
        except Exception as e:
            import traceback
            traceback.print_exc()
            meta["notes"].append(f"{name}: failed: {type(e).__name__}: {e}")
            log(f"[{name}] failed: {e}")
        save()
    save()
    print()
    print(open(md_path).read())
    log(f"wrote {md_path} and {json_path} in {time.time() - t0:.0f} s")
    bad = [r for r in rows if row_status(r) == "FAIL" or fp16_status(r) == "FAIL"]
    return 1 if bad or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
