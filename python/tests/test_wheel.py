#!/usr/bin/env python3
"""The wheel test (ctest python_wheel, python_wheel_ort; python/CMakeLists.txt).

    test_wheel.py --version V --library LIB [--module MOD ...] --work DIR
        builds the wheel from the build's libraries, checks its contents and
        tags, installs it into a fresh venv (pip install --no-index --no-deps)
        and checks the installed package from inside that venv.
    test_wheel.py --ort --work DIR
        with the venv the first mode left in DIR: finds a Python with
        onnxruntime (>= 1.29), onnx and numpy ($HIPDNN_EP_ORT_PYTHON, else
        python3 on PATH, /usr/bin/python3, /opt/torch/.venv/bin/python3) and
        runs check_ort.py there on the installed package; exits 77 (ctest's
        skip) naming what is missing when there is none.
    test_wheel.py --inside --version V --modules a,b
        (run by the first mode with the venv's python) the installed checks.
"""
import argparse
import ctypes
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
SKIP = 77
failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what, flush=True)
    if not cond:
        failures.append(what)


def run(cmd, **kw):
    print("$ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    sys.stdout.write(r.stdout)
    return r


def finish():
    if failures:
        print(f"{len(failures)} check(s) failed:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("all checks passed")
    sys.exit(0)


# ---- outside: build, inspect, install -----------------------------------------------

def check_wheel_file(whl, version, modules):
    name = os.path.basename(whl)
    check(name == f"onnxruntime_ep_hipdnn-{version}-py3-none-linux_x86_64.whl",
          f"wheel file name {name}: version {version}, tag py3-none-linux_x86_64")
    with zipfile.ZipFile(whl) as z:
        names = z.namelist()
        dist = f"onnxruntime_ep_hipdnn-{version}.dist-info"
        wheel_meta = z.read(f"{dist}/WHEEL").decode()
        meta = z.read(f"{dist}/METADATA").decode()
    libs = sorted(os.path.basename(n) for n in names if n.endswith(".so"))
    want = sorted(["libhipdnn_ep.so"] + modules)
    check(libs == want, f"the wheel's libraries {libs} are the library and the modules built {want}")
    check(all(n.startswith(("onnxruntime_ep_hipdnn/", dist + "/")) for n in names),
          "every file is in the package or its dist-info (nothing in .data, no stray top-level files)")
    check(not any("onnxruntime.so" in n or "libonnxruntime" in n for n in names),
          "no ONNX Runtime library in the wheel")
    check("Root-Is-Purelib: false" in wheel_meta and "Tag: py3-none-linux_x86_64" in wheel_meta,
          "WHEEL: Root-Is-Purelib false, tag py3-none-linux_x86_64")
    check("Name: onnxruntime-ep-hipdnn" in meta and f"Version: {version}" in meta,
          "METADATA: name onnxruntime-ep-hipdnn, the project version")
    check("Requires-Dist" not in meta, "METADATA: no dependencies (no onnxruntime package among them)")


def outside(a):
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    modules = [os.path.basename(m) for m in a.module]
    cmd = [sys.executable, os.path.join(PYTHON_DIR, "build_wheel.py"), "--version", a.version,
           "--library", a.library, "--work", os.path.join(work, "stage"), "--out", os.path.join(work, "dist")]
    for m in a.module:
        cmd += ["--module", m]
    r = run(cmd)
    if r.returncode != 0:
        check(False, "build_wheel.py builds the wheel")
        finish()
    whl = r.stdout.strip().splitlines()[-1]
    check(os.path.isfile(whl), f"build_wheel.py made {whl}")
    check_wheel_file(whl, a.version, modules)

    venv = os.path.join(work, "venv")
    r = run([sys.executable, "-m", "venv", venv])
    if r.returncode != 0:
        check(False, "python3 -m venv makes a fresh venv (Debian: python3-venv)")
        finish()
    vpy = os.path.join(venv, "bin", "python")
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    env.pop("PYTHONPATH", None)
    r = run([vpy, "-m", "pip", "install", "--no-index", "--no-deps", "--no-cache-dir", whl], env=env)
    check(r.returncode == 0, "pip install --no-index --no-deps installs the wheel into the venv")
    if r.returncode != 0:
        finish()
    # Run from an empty folder, isolated (-I): the import must find the
    # installed copy, never python/ of the source tree.
    empty = tempfile.mkdtemp(dir=work)
    r = run([vpy, "-I", os.path.abspath(__file__), "--inside", "--version", a.version,
             "--modules", ",".join(modules)], cwd=empty, env=env)
    check(r.returncode == 0, "the installed package passes its checks inside the venv")
    site = subprocess.run([vpy, "-I", "-c", "import onnxruntime_ep_hipdnn as m, os; "
                           "print(os.path.dirname(os.path.dirname(m.__file__)))"],
                          cwd=empty, env=env, stdout=subprocess.PIPE, text=True).stdout.strip()
    with open(os.path.join(work, "installed.json"), "w") as f:
        json.dump({"site_packages": site, "version": a.version, "modules": modules}, f)
    finish()


# ---- inside the venv: the installed package ------------------------------------------

class FakeDevice:
    def __init__(self, ep_name, vendor, backend, device_id):
        self.ep_name, self.ep_vendor = ep_name, vendor
        self.ep_metadata = {"backend": backend, "device_id": str(device_id)}


class FakeOrt:
    """Stands in for onnxruntime's registration calls: what register_library
    hands ONNX Runtime and how it filters what comes back. The real thing
    is python_wheel_ort's (check_ort.py)."""

    def __init__(self, devices_by_name):
        self.devices_by_name = devices_by_name  # what registering a name would list
        self.registered = {}
        self.foreign = []

    def register_execution_provider_library(self, name, path):
        if name in self.registered:
            raise RuntimeError(f"{name} is registered already")
        self.registered[name] = path

    def unregister_execution_provider_library(self, name):
        del self.registered[name]

    def get_ep_devices(self):
        return self.foreign + [d for n in self.registered for d in self.devices_by_name(n)]


def machine(gpus):
    """The devices our library lists under registration name n on a machine
    with `gpus` GPUs (ep/ep_factory.c): n = GPU 0 (else the CPU), n_ref = the
    CPU when there is a GPU, n_1, n_2 = GPUs 1, 2; listed in a scrambled order."""
    def devices(n):
        if gpus == 0:
            return [FakeDevice(n, "hipdnn-ep", "ref", 0)]
        devs = [FakeDevice(n if g == 0 else f"{n}_{g}", "hipdnn-ep", "cuda", g) for g in range(min(gpus, 3))]
        devs.append(FakeDevice(n + "_ref", "hipdnn-ep", "ref", 0))
        return devs[::-1]
    return devices


def check_register_library(m):
    lib = m.get_library_path()
    for gpus in (0, 1, 2, 3, 5):
        ort = FakeOrt(machine(gpus))
        ort.foreign = [FakeDevice("CPUExecutionProvider", "Microsoft", "", 0)]
        got = m.register_library(ort)
        check(ort.registered == {"HipDNNExecutionProvider": lib},
              f"{gpus} GPU(s): register_library registers get_library_path() under get_ep_name()")
        ids = [(d.ep_metadata["backend"], int(d.ep_metadata["device_id"])) for d in got]
        check(ids == [("cuda", g) for g in range(min(gpus, 3))],
              f"{gpus} GPU(s): register_library returns the GPU devices in GPU order, no CPU: {ids}")
        with_cpu = m.get_ep_devices(ort, include_cpu=True)
        check([d.ep_metadata["backend"] for d in with_cpu] == ["cuda"] * min(gpus, 3) + ["ref"],
              f"{gpus} GPU(s): include_cpu=True adds the CPU reference device last")
        again = m.register_library(ort)
        check(len(again) == len(got) and len(ort.registered) == 1,
              f"{gpus} GPU(s): a second register_library reuses the registration")
        m.unregister_library(ort)
        check(ort.registered == {}, f"{gpus} GPU(s): unregister_library unregisters get_ep_name()")
    ort = FakeOrt(machine(1))
    got = m.register_library(ort, name="AMDGPUExecutionProvider")
    check(list(ort.registered) == ["AMDGPUExecutionProvider"] and [d.ep_name for d in got] ==
          ["AMDGPUExecutionProvider"], "register_library(name=...) registers and lists under that name")
    ort = FakeOrt(machine(1))
    ort.foreign = [FakeDevice("HipDNNExecutionProvider", "SomeoneElse", "", 0)]
    try:
        m.register_library(ort)
        refused = False
    except ValueError as e:
        refused = "another library" in str(e)
    check(refused and not ort.registered, "a name another library holds is refused with ValueError")


def inside(a):
    import importlib.metadata

    import onnxruntime_ep_hipdnn as m
    pkg = os.path.dirname(os.path.abspath(m.__file__))
    check(os.path.realpath(pkg).startswith(os.path.realpath(sys.prefix) + os.sep),
          f"the package imports from the venv ({pkg})")
    check("onnxruntime" not in sys.modules, "importing the package does not import onnxruntime")
    check(m.__version__ == a.version, f"__version__ {m.__version__} is the project version {a.version}")
    check(importlib.metadata.version("onnxruntime-ep-hipdnn") == a.version,
          "the installed distribution onnxruntime-ep-hipdnn has the project version")

    lib = m.get_library_path()
    check(os.path.isabs(lib) and os.path.isfile(lib) and os.path.dirname(lib) == pkg,
          f"get_library_path() is an existing file inside the installed package: {lib}")
    with open(lib, "rb") as f:
        head = f.read(20)
    check(head[:4] == b"\x7fELF" and head[4] == 2 and head[5] == 1 and int.from_bytes(head[18:20], "little") == 62,
          "the library is a 64-bit little-endian x86-64 ELF file")
    dl = ctypes.CDLL(lib, mode=os.RTLD_NOW | os.RTLD_LOCAL)
    for sym in ("CreateEpFactories", "ReleaseEpFactory"):
        check(hasattr(dl, sym), f"the library exports {sym}")
    check(not hasattr(dl, "ep_factories_create"), "the library keeps its internals hidden (ep_factories_create)")

    want = sorted(a.modules.split(",")) if a.modules else []
    shipped = sorted(os.path.basename(p) for p in m.get_gpu_module_paths())
    check(shipped == want, f"get_gpu_module_paths() lists the GPU modules built, beside the library: {shipped}")
    present = sorted(os.path.basename(p) for p in glob.glob(os.path.join(pkg, "*.so")))
    check(present == sorted(["libhipdnn_ep.so"] + want), f"the package holds exactly these libraries: {present}")

    check(m.get_ep_name() == "HipDNNExecutionProvider", f"get_ep_name() is {m.get_ep_name()}")
    n = "HipDNNExecutionProvider"
    check(m.get_ep_names() == [n, n + "_ref", n + "_1", n + "_2"], f"get_ep_names() is {m.get_ep_names()}")
    check(m.get_ep_names("AMDGPUExecutionProvider")[0] == "AMDGPUExecutionProvider" and
          m.get_ep_names("AMDGPUExecutionProvider")[1] == "AMDGPUExecutionProvider_ref",
          "get_ep_names(name) derives the names from the registration name")
    check(m.get_ep_name() in m.get_ep_names(), "get_ep_name() is among get_ep_names()")

    check_register_library(m)
    try:
        import onnxruntime  # noqa: F401
        have_ort = True
    except ImportError:
        have_ort = False
    if not have_ort:
        try:
            m.register_library()
            ok = False
        except ImportError as e:
            ok = "onnxruntime" in str(e)
        check(ok, "with no onnxruntime to import, register_library() raises ImportError naming onnxruntime")
    finish()


# ---- the real ONNX Runtime -----------------------------------------------------------

PROBE = ("import onnxruntime as o, onnx, numpy; "
         "assert hasattr(o, 'register_execution_provider_library'), 'onnxruntime ' + o.__version__ + ' < 1.23'; "
         "print(o.__version__)")


def ort_python():
    """(python, why_not): a Python that has onnxruntime >= 1.29, onnx and numpy."""
    cands = [os.environ.get("HIPDNN_EP_ORT_PYTHON"), shutil.which("python3"), "/usr/bin/python3",
             "/opt/torch/.venv/bin/python3"]
    why, seen = [], set()
    for c in cands:
        if not c or not os.path.exists(c) or os.path.realpath(c) in seen:
            continue
        seen.add(os.path.realpath(c))
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        r = subprocess.run([c, "-c", PROBE], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        if r.returncode == 0:
            return c, None
        last = (r.stderr.strip().splitlines() or ["?"])[-1]
        why.append(f"{c}: {last}")
    return None, "; ".join(why) or "no python3 found"


def ort(a):
    work = os.path.abspath(a.work)
    try:
        with open(os.path.join(work, "installed.json")) as f:
            inst = json.load(f)
    except OSError:
        print(f"FAIL  {work}/installed.json missing: the python_wheel test did not install the wheel")
        sys.exit(1)
    py, why = ort_python()
    if not py:
        print("SKIP  registering with ONNX Runtime: no Python with onnxruntime (>= 1.29), onnx and numpy "
              f"({why}); set HIPDNN_EP_ORT_PYTHON to one")
        sys.exit(SKIP)
    env = dict(os.environ, PYTHONPATH=inst["site_packages"], PYTHONUNBUFFERED="1")
    r = subprocess.run([py, os.path.join(HERE, "check_ort.py"), "--expect-version", inst["version"]], env=env)
    sys.exit(r.returncode)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inside", action="store_true")
    ap.add_argument("--ort", action="store_true")
    ap.add_argument("--version")
    ap.add_argument("--library")
    ap.add_argument("--module", action="append", default=[])
    ap.add_argument("--modules", default="")
    ap.add_argument("--work")
    a = ap.parse_args()
    if a.inside:
        inside(a)
    elif a.ort:
        ort(a)
    else:
        if not (a.version and a.library and a.work):
            ap.error("--version, --library and --work are required")
        outside(a)


if __name__ == "__main__":
    main()
