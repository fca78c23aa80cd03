"""Helpers shared by bench/bench.py and bench/ep_check.py (GPU machine).

ONNX Runtime (1.23+ Python API) with HipDNNExecutionProvider loaded as a plugin
EP library: registration, picking our GPU device, sessions, node placement,
torchvision export, and the comparison rule. Nothing here imports torch at
module level: ep_check.py's leak check runs without it.
"""
import collections
import glob
import inspect
import os
import sys
import time

EP_NAME = "HipDNNExecutionProvider"
REG_NAME = EP_NAME  # the registration name is the EP name (and its devices')
NVIDIA = 0x10DE
AMD = 0x1002

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def log(*a):
    print(*a, flush=True)


def ep_lib_path():
    """The EP library: $HIPDNN_EP_LIB, else build/lib/libhipdnn_ep.so of this checkout."""
    p = os.environ.get("HIPDNN_EP_LIB") or os.path.join(REPO, "build", "lib", "libhipdnn_ep.so")
    return os.path.abspath(p)


def ort_capi_lib():
    """libonnxruntime.so* inside the installed onnxruntime package, or None."""
    try:
        import onnxruntime
    except ImportError:
        return None
    capi = os.path.join(os.path.dirname(onnxruntime.__file__), "capi")
    libs = sorted(glob.glob(os.path.join(capi, "libonnxruntime.so*")), key=len)
    return libs[0] if libs else None


# ---- registration and devices ---------------------------------------------------

def register(ort, lib=None):
    """Registers the EP library once per process; returns its path."""
    lib = lib or ep_lib_path()
    if not os.path.exists(lib):
        raise RuntimeError(f"EP library {lib} not found (build it, or set HIPDNN_EP_LIB)")
    if getattr(register, "_done", None) != lib:
        ort.register_execution_provider_library(REG_NAME, lib)
        register._done = lib
    return lib


def ep_devices(ort):
    return [d for d in ort.get_ep_devices() if d.ep_name == EP_NAME]


def kv(obj):
    """A dict from ORT's key-value pairs (a dict in 1.23+; be lenient)."""
    if obj is None:
        return {}
    if isinstance(obj, dict):
        return obj
    for attr in ("entries", "items"):
        f = getattr(obj, attr, None)
        if callable(f):
            try:
                return dict(f())
            except Exception:
                pass
    try:
        return dict(obj)
    except Exception:
        return {}


def dev_backend(d):
    try:
        return kv(d.ep_metadata).get("backend", "") or ""
    except Exception:
        return ""


def describe_device(d):
    try:
        return _describe_device(d)
    except Exception as e:  # an attribute this onnxruntime spells differently
        return f"{getattr(d, 'ep_name', '?')} backend={dev_backend(d) or '?'} ({type(e).__name__}: {e})"


def _describe_device(d):
    hw = d.device
    md = kv(getattr(hw, "metadata", None))
    em = kv(getattr(d, "ep_metadata", None))
    return (f"{d.ep_name} vendor={d.ep_vendor} backend={em.get('backend', '?')} "
            f"hw.type={hw.type} hw.vendor_id=0x{hw.vendor_id:04x} hw.device_id=0x{hw.device_id:04x} "
            f"hw.metadata={md} ep_metadata={em}")


def gpu_device(ort):
    """Our EP's first device whose backend is not the CPU reference one."""
    devs = ep_devices(ort)
    gpus = [d for d in devs if dev_backend(d) not in ("", "ref")]
    if not gpus:
        listed = "; ".join(describe_device(d) for d in devs) or "none"
        raise RuntimeError(f"{EP_NAME} lists no GPU device (devices listed: {listed}); "
                           "is libhipdnn_ep_cuda.so next to libhipdnn_ep.so, and libcudnn.so.9 on LD_LIBRARY_PATH?")
    return gpus[0]


def torch_capture(torch, f, *xs):
    """(graph, output) of f(*xs) captured in a CUDA graph, after 3 warm-up calls on a
    side stream (what torch's own docs do before capturing), without autograd."""
    with torch.no_grad():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                f(*xs)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            y = f(*xs)
    return graph, y


def session_options(ort, opt_level="all", record_assignment=True, threads=0):
    so = ort.SessionOptions()
    if record_assignment:
        so.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    levels = {
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "none": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    }
    so.graph_optimization_level = levels[opt_level]
    if threads:
        so.intra_op_num_threads = threads
    return so


def options_dict(pairs):
    """{KEY: VALUE} of "KEY=VALUE" strings (those without '=' left out)."""
    return dict(kv.split("=", 1) for kv in pairs if "=" in kv)


def env_provider_options():
    """Provider options from HIPDNN_EP_BENCH_OPTIONS="key=value,key=value"."""
    return options_dict(os.environ.get("HIPDNN_EP_BENCH_OPTIONS", "").split(","))


def ep_session(ort, model, dev, provider_options=None, opt_level="all"):
    so = session_options(ort, opt_level)
    opts = env_provider_options()
    opts.update(provider_options or {})
    so.add_provider_for_devices([dev], opts)
    sess = ort.InferenceSession(model, sess_options=so)
    # The Python binding re-creates a session on the CPU EP alone when a run
    # fails with an EP error, and runs there: an error of ours would pass as
    # a (slow) success. Keep errors errors.
    if hasattr(sess, "disable_fallback"):
        sess.disable_fallback()
    return sess


def cpu_session(ort, model, opt_level="all", threads=0):
    so = session_options(ort, opt_level, record_assignment=False, threads=threads)
    return ort.InferenceSession(model, sess_options=so, providers=["CPUExecutionProvider"])


def placement(sess):
    """{'by_ep': {ep: n}, 'by_ep_op': {ep: {op: n}}, 'total': n, 'on_ep': n, 'how': ...}
    or {'unknown': why}."""
    fn = getattr(sess, "get_provider_graph_assignment_info", None)
    if fn is None:
        inner = getattr(sess, "_sess", None)
        fn = getattr(inner, "get_provider_graph_assignment_info", None) or \
            getattr(inner, "get_ep_graph_assignment_info", None)
    if fn is None:
        return {"unknown": "this onnxruntime has no get_provider_graph_assignment_info"}
    try:
        subgraphs = list(fn())
    except Exception as e:
        return {"unknown": f"get_provider_graph_assignment_info failed: {e}"}
    by_ep = collections.Counter()
    by_ep_op = collections.defaultdict(collections.Counter)
    parts = sum(1 for sg in subgraphs if sg.ep_name == EP_NAME)  # one per fused node
    for sg in subgraphs:
        nodes = sg.get_nodes() if hasattr(sg, "get_nodes") else getattr(sg, "nodes", [])
        for n in nodes:
            by_ep[sg.ep_name] += 1
            by_ep_op[sg.ep_name][getattr(n, "op_type", getattr(n, "operator_type", "?"))] += 1
    total = sum(by_ep.values())
    if total == 0:
        return {"unknown": "the assignment info lists no nodes"}
    return {"by_ep": dict(by_ep), "by_ep_op": {k: dict(v) for k, v in by_ep_op.items()},
            "total": total, "on_ep": by_ep.get(EP_NAME, 0), "parts": parts, "how": "get_provider_graph_assignment_info"}


def placement_str(p):
    if "unknown" in p:
        return f"placement unknown ({p['unknown']})"
    others = ", ".join(f"{ep}: " + ", ".join(f"{op} x{n}" for op, n in sorted(ops.items()))
                       for ep, ops in p["by_ep_op"].items() if ep != EP_NAME)
    s = f"{p['on_ep']}/{p['total']} nodes on {EP_NAME}"
    return s + (f" (elsewhere: {others})" if others else "")


def placement_cell(p):
    return "?" if "unknown" in p else f"{p['on_ep']}/{p['total']}"


# ---- timing -------------------------------------------------------------------

def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if n == 0:
        return None
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def time_fn(fn, iters, warmup, sync):
    """Wall ms of fn (sync after each call): {median_ms, min_ms, iters, warmup}."""
    for _ in range(warmup):
        fn()
    sync()
    ts = []
    for _ in range(iters):
        t = time.perf_counter()
        fn()
        sync()
        ts.append((time.perf_counter() - t) * 1e3)
    return {"median_ms": median(ts), "min_ms": min(ts), "iters": iters, "warmup": warmup}


def take_turns(fns, iters, rounds, sync, warmup=3):
    """{key: [median ms of each round]}: the functions (key -> fn) timed in
    turn, rounds times, so what drifts over a run (the GPU's state) lands
    on each of them alike."""
    ts = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            ts[k].append(time_fn(fn, iters, warmup, sync)["median_ms"])
    return ts


# ---- comparison ---------------------------------------------------------------

REL_L2_TOL = 1e-2  # fp32 with TF32 convolutions


def compare(got, ref, tol=REL_L2_TOL):
    """rel L2 = ||got - ref|| / ||ref||, max abs, max rel; pass when rel L2 < tol
    and everything is finite and the shapes agree."""
    import numpy as np
    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape:
        return {"pass": False, "why": f"shape {got.shape} != {ref.shape}"}
    if not np.all(np.isfinite(got)):
        return {"pass": False, "why": "non-finite values", "n_nonfinite": int((~np.isfinite(got)).sum())}
    d = got - ref
    nref = float(np.linalg.norm(ref))
    rel_l2 = float(np.linalg.norm(d)) / (nref if nref > 0 else 1.0)
    max_abs = float(np.max(np.abs(d))) if d.size else 0.0
    max_rel = float(np.max(np.abs(d) / (np.abs(ref) + 1e-6))) if d.size else 0.0
    return {"pass": rel_l2 < tol, "rel_l2": rel_l2, "max_abs": max_abs, "max_rel": max_rel, "tol_rel_l2": tol}


def compare_str(c):
    if "rel_l2" not in c:
        return f"FAIL ({c.get('why', '?')})"
    return (f"{'PASS' if c['pass'] else 'FAIL'} rel_l2={c['rel_l2']:.3g} (tol {c['tol_rel_l2']:g}) "
            f"max_abs={c['max_abs']:.3g} max_rel={c['max_rel']:.3g}")


# ---- export -------------------------------------------------------------------

def build_torchvision(name, seed=0, calibrate_bn=False):
    """torchvision.models.<name>(weights=None) in eval mode, seeded: the same
    seed gives the same weights, so torch and the exported file agree.

    calibrate_bn: batch norms get running statistics from a few random
    batches (train-mode passes, cumulative averages). With torchvision's
    fresh ones (mean 0, variance 1) the activations of MobileNetV2 and
    EfficientNet-B0 shrink layer by layer to logits of ~1e-9 and ~1e-14,
    which are 0 in fp16, so their half-precision results cannot be checked
    against fp32; calibrated, every layer carries signal (and TF32's and
    fp16's rounding shows: docs/benchmarks.md)."""
    import torch
    import torchvision
    ctor = getattr(torchvision.models, name, None)
    if ctor is None or not callable(ctor):
        raise RuntimeError(f"torchvision.models has no '{name}'")
    torch.manual_seed(seed)
    if "weights" in inspect.signature(ctor).parameters:
        model = ctor(weights=None)
    else:
        model = ctor(pretrained=False)
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if bns and calibrate_bn:
        for m in bns:
            m.reset_running_stats()
            m.momentum = None  # a cumulative average over the passes below
        model.train()
        with torch.no_grad():
            for _ in range(3):
                model(torch.randn(8, 3, 224, 224))
        for m in bns:
            m.momentum = 0.1
    return model.eval()


def export_model(model, path, opset=17, size=224, name="model"):
    """A torch module on the CPU -> ONNX at `path`: input "input"
    [N,3,size,size] with a dynamic batch, output "output". Tries the classic
    exporter (dynamo=False) first, then the dynamo one. Returns a dict saying
    which exporter and opset worked."""
    import torch
    import torchvision
    x = torch.randn(2, 3, size, size)
    params = inspect.signature(torch.onnx.export).parameters
    t0 = time.time()
    errors = []
    attempts = []
    if "dynamo" in params:
        attempts.append(("classic", opset, dict(dynamo=False)))
        attempts.append(("dynamo", opset, dict(dynamo=True)))
        if opset < 18:  # the dynamo exporter's own minimum is 18
            attempts.append(("dynamo", 18, dict(dynamo=True)))
    else:
        attempts.append(("classic", opset, {}))
    for how, ops, extra in attempts:
        kw = dict(input_names=["input"], output_names=["output"], opset_version=ops)
        if how == "classic":
            kw.update(do_constant_folding=True,
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
        else:
            kw["dynamic_shapes"] = ({0: torch.export.Dim("batch")},)
            if "external_data" in params:
                kw["external_data"] = False
        kw.update(extra)
        try:
            with torch.no_grad():
                torch.onnx.export(model, (x,), path, **kw)
            return {"model": name, "path": path, "exporter": how, "opset": ops,
                    "seconds": round(time.time() - t0, 1), "torch": torch.__version__,
                    "torchvision": torchvision.__version__, "errors": errors}
        except Exception as e:  # try the next exporter
            errors.append(f"{how} (opset {ops}): {type(e).__name__}: {str(e)[:300]}")
            log(f"  export {name} with the {how} exporter failed: {errors[-1]}")
    raise RuntimeError(f"export of {name} failed: " + " | ".join(errors))


def export_torchvision(name, path, opset=17, size=224, seed=0):
    """build_torchvision + export_model."""
    return export_model(build_torchvision(name, seed), path, opset=opset, size=size, name=name)


def model_io(path):
    """(input name, output names) of an ONNX file, read by onnxruntime on the CPU."""
    import onnxruntime as ort
    s = cpu_session(ort, path)
    return s.get_inputs()[0].name, [o.name for o in s.get_outputs()]


def versions():
    v = {"python": sys.version.split()[0]}
    for mod in ("onnxruntime", "onnx", "torch", "torchvision", "numpy"):
        try:
            v[mod] = __import__(mod).__version__
        except Exception:
            v[mod] = None
    try:
        import torch
        v["cudnn_torch"] = torch.backends.cudnn.version()
        v["cuda_torch"] = torch.version.cuda
    except Exception:
        pass
    return v


def gpu_name():
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        name = pynvml.nvmlDeviceGetName(h)
        drv = pynvml.nvmlSystemGetDriverVersion()
        name = name.decode() if isinstance(name, bytes) else name
        drv = drv.decode() if isinstance(drv, bytes) else drv
        return f"{name} (driver {drv})"
    except Exception:
        pass
    try:
        import subprocess
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip().splitlines()
        if out:
            n, d = [s.strip() for s in out[0].split(",", 1)]
            return f"{n} (driver {d})"
    except Exception:
        pass
    return "unknown GPU"


def key_value(text):
    """An argparse type: KEY=VALUE, refused without the '='."""
    import argparse
    if "=" not in text or text.startswith("="):
        raise argparse.ArgumentTypeError(f"'{text}' is not KEY=VALUE")
    return text


class env_set:
    """VAR=VALUE in the environment inside the block (the EP reads most of
    its switches as it builds a plan: at session creation and at a new
    shape's first run; the kernels' own, HIPDNN_EP_EARLY_LAUNCH,
    HIPDNN_EP_FLASH_SPLIT and HIPDNN_EP_DEPTHWISE_PLANE, once a process,
    so an A/B of those needs a process each)."""

    def __init__(self, pair):
        self.var, _, self.value = (pair or "").partition("=")

    def __enter__(self):
        self.old = os.environ.get(self.var)
        if self.var:
            os.environ[self.var] = self.value

    def __exit__(self, *exc):
        if self.var:
            if self.old is None:
                os.environ.pop(self.var, None)
            else:
                os.environ[self.var] = self.old
