#!/usr/bin/env python3
"""The onnxruntime-ep-hipdnn package with a real ONNX Runtime (>= 1.29; onnx
and numpy too): registers the library through the package's helper, lists
the devices, runs a small model (Conv+Relu, GlobalAveragePool, MatMul+Add)
on our device with every node on the EP, and compares with the CPU EP.

    python3 check_ort.py [--wheel FILE.whl] [--require-gpu] [--tf32 0|1]

The package is imported from --wheel (unpacked into a temporary folder),
else from wherever Python finds it (installed, or PYTHONPATH). Without a
GPU it runs the CPU reference device and says so; --require-gpu makes that
a failure (the GPU machine). Exit status 0 when every check passed.

On the GPU machine (onnxruntime 1.30 in /opt/torch/.venv), after `make wheel`:
    /opt/torch/.venv/bin/python3 python/tests/check_ort.py --require-gpu \\
        --wheel build/dist/onnxruntime_ep_hipdnn-*.whl
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile

failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)


def describe(d):
    md = dict(d.ep_metadata or {})
    return (f"{d.ep_name}: backend={md.get('backend')} device_id={md.get('device_id')} "
            f"device_name={md.get('device_name')!r} hw.type={d.device.type}")


def small_model(onnx, np):
    """x[N,3,16,16] -> Conv 3x3 (8 ch, bias) -> Relu -> GlobalAveragePool ->
    Flatten -> MatMul [8,10] -> Add -> y[N,10]; random weights."""
    h, tp = onnx.helper, onnx.TensorProto
    rng = np.random.default_rng(7)
    inits = [
        onnx.numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w"),
        onnx.numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b"),
        onnx.numpy_helper.from_array(rng.standard_normal((8, 10)).astype(np.float32), "w2"),
        onnx.numpy_helper.from_array(rng.standard_normal(10).astype(np.float32), "b2"),
    ]
    nodes = [
        h.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        h.make_node("Relu", ["c"], ["r"]),
        h.make_node("GlobalAveragePool", ["r"], ["p"]),
        h.make_node("Flatten", ["p"], ["f"], axis=1),
        h.make_node("MatMul", ["f", "w2"], ["m"]),
        h.make_node("Add", ["m", "b2"], ["y"]),
    ]
    g = h.make_graph(nodes, "hipdnn_ep_wheel_check",
                     [h.make_tensor_value_info("x", tp.FLOAT, ["N", 3, 16, 16])],
                     [h.make_tensor_value_info("y", tp.FLOAT, ["N", 10])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8  # what ONNX Runtime 1.23+ reads, whatever onnx writes by default
    onnx.checker.check_model(m)
    return m.SerializeToString()


def symlink_child(path, name):
    """In a fresh process: registers `path` (a link to the library under
    another file name, as AMD's umbrella EP loads it) and prints the
    backends of its devices."""
    import onnxruntime as ort
    import onnxruntime_ep_hipdnn as ep
    ort.register_execution_provider_library(name, path)
    print(json.dumps([dict(d.ep_metadata or {}).get("backend") for d in ep.get_ep_devices(ort, name, True)]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheel", help="import the package from this wheel")
    ap.add_argument("--require-gpu", action="store_true", help="fail when the EP lists no GPU")
    ap.add_argument("--tf32", choices=["0", "1"], default="0",
                    help="use_tf32 (default 0: strict fp32, compared at 1e-4; 1: compared at 1e-2)")
    ap.add_argument("--expect-version", help="the package version to expect")
    ap.add_argument("--symlink-child", nargs=2, metavar=("PATH", "NAME"), help=argparse.SUPPRESS)
    a = ap.parse_args()

    if a.wheel:
        unpacked = tempfile.mkdtemp(prefix="hipdnn-ep-wheel-")
        with zipfile.ZipFile(a.wheel) as z:
            z.extractall(unpacked)
            for f in z.namelist():
                if f.endswith(".so"):
                    os.chmod(os.path.join(unpacked, f), 0o755)
        sys.path.insert(0, unpacked)
        os.environ["PYTHONPATH"] = os.pathsep.join([unpacked] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    if a.symlink_child:
        symlink_child(*a.symlink_child)
        return

    import numpy as np
    import onnx
    import onnxruntime as ort

    import onnxruntime_ep_hipdnn as ep

    print(f"onnxruntime {ort.__version__} ({ort.__file__})")
    print(f"onnxruntime_ep_hipdnn {ep.__version__} ({ep.__file__})")
    print(f"library {ep.get_library_path()}; GPU modules {ep.get_gpu_module_paths()}")
    if a.expect_version:
        check(ep.__version__ == a.expect_version, f"package version {ep.__version__} is {a.expect_version}")

    name = ep.get_ep_name()
    gpus = ep.register_library(ort)
    every = ep.get_ep_devices(ort, include_cpu=True)
    ours = [d for d in ort.get_ep_devices() if d.ep_name in ep.get_ep_names()]
    for d in ours:
        print("  device " + describe(d))
    check(len(every) == len(ours), f"get_ep_devices(include_cpu=True) lists all {len(ours)} device(s) of our names")
    check(len({d.ep_name for d in ours}) == len(ours), "one device per EP name")
    by_name = {d.ep_name: d for d in ours}
    check(name in by_name, f"a device is listed under get_ep_name() ({name})")
    backends = [dict(d.ep_metadata or {}).get("backend") for d in gpus]
    check(all(b in ("cuda", "hip") for b in backends), f"register_library returns GPU devices only: {backends}")
    if gpus:
        check(gpus[0].ep_name == name, f"GPU 0 is offered under {name}")
        check(f"{name}_ref" in by_name and dict(by_name[f"{name}_ref"].ep_metadata).get("backend") == "ref",
              f"the CPU reference device is offered under {name}_ref")
        check([d.ep_name for d in gpus] == ep.get_ep_names()[:1] + ep.get_ep_names()[2:2 + len(gpus) - 1],
              "GPU n is offered under the name get_ep_names() gives it")
    else:
        print("note  no GPU device: the EP lists only the CPU reference device (is libcudnn.so.9 / "
              "libhipdnn_backend.so on the library path?)")
        check(not a.require_gpu, "a GPU device is listed (--require-gpu)")
        check(dict(by_name.get(name).ep_metadata).get("backend") == "ref" if name in by_name else False,
              f"with no GPU, {name} is the CPU reference device")
    check(len(ep.register_library(ort)) == len(gpus), "a second register_library reuses the registration")

    model = small_model(onnx, np)
    dev = gpus[0] if gpus else by_name.get(name)
    cpu = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    so = ort.SessionOptions()
    so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")  # every node on our EP, or no session
    so.add_provider_for_devices([dev], {"use_tf32": a.tf32})
    sess = None
    try:
        sess = ort.InferenceSession(model, sess_options=so)
        if hasattr(sess, "disable_fallback"):
            sess.disable_fallback()  # an EP error must not pass as a CPU EP rerun
        print(f"  session providers: {sess.get_providers()}")
        check(sess.get_providers()[0] == dev.ep_name, f"the session runs on {dev.ep_name}")
    except Exception as e:  # the failure is the finding
        check(False, f"a session on {dev.ep_name} with every node on the EP: {e}")
    tol = 1e-4 if a.tf32 == "0" else 1e-2
    for batch in (1, 3) if sess else ():
        x = np.random.default_rng(batch).standard_normal((batch, 3, 16, 16)).astype(np.float32)
        want = cpu.run(None, {"x": x})[0]
        got = sess.run(None, {"x": x})[0]
        err = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))
        check(got.shape == want.shape and float(np.ptp(want)) > 0 and err <= tol,
              f"batch {batch} on {dev.ep_name} ({dict(dev.ep_metadata).get('backend')}, use_tf32={a.tf32}): "
              f"max error {err:.2e} of the CPU EP's largest output (tolerance {tol:g})")
    del sess

    # AMD's umbrella EP loads a backend by its own file name (libhipgpu.so):
    # through a link of that name, the library must still find its GPU
    # modules beside the file itself.
    with tempfile.TemporaryDirectory() as t:
        link = os.path.join(t, "libhipgpu.so")
        os.symlink(ep.get_library_path(), link)
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--symlink-child", link,
                            "AMDGPUExecutionProvider"], stdout=subprocess.PIPE, text=True)
        got = json.loads(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 and r.stdout.strip() else None
        want = backends + ["ref"]
        check(got == want, f"registered through a link named libhipgpu.so, the library lists {got} (want {want})")

    ep.unregister_library(ort)
    check(not [d for d in ort.get_ep_devices() if d.ep_name in ep.get_ep_names()],
          "unregister_library removes every device of ours")
    if failures:
        print(f"{len(failures)} check(s) failed:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("all checks passed" + ("" if gpus else " (CPU reference device: no GPU)"))


if __name__ == "__main__":
    main()
