#!/usr/bin/env python3
"""Builds the onnxruntime-ep-hipdnn wheel from a build's libraries, offline.

    build_wheel.py --version V --library libhipdnn_ep.so [--module libhipdnn_ep_cuda.so ...]
                   --work STAGE_DIR --out DIST_DIR

Stages this folder's package sources, a generated _version.py and the
libraries (debug info stripped; the build's own copies keep it) into
STAGE_DIR, then runs `pip wheel --no-build-isolation --no-deps --no-index`
there with this interpreter's setuptools and wheel, so the source tree gets
no build litter and nothing is downloaded. Prints the wheel's path.
`make wheel` (CMake target `wheel`) runs it with the version from
CMakeLists.txt and the modules the build made.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "onnxruntime_ep_hipdnn"
LIBRARY = "libhipdnn_ep.so"
MODULES = ("libhipdnn_ep_cuda.so", "libhipdnn_ep_hip.so")


def stage_library(src, dst):
    strip = shutil.which("strip")
    if strip and subprocess.run([strip, "--strip-debug", "-o", dst, src]).returncode == 0:
        return
    shutil.copyfile(src, dst)
    os.chmod(dst, 0o755)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", required=True, help="the project version (CMakeLists.txt)")
    ap.add_argument("--library", required=True, help="the built libhipdnn_ep.so")
    ap.add_argument("--module", action="append", default=[], help="a built GPU module (repeatable)")
    ap.add_argument("--work", required=True, help="staging folder (emptied)")
    ap.add_argument("--out", required=True, help="folder for the wheel (its older wheels are removed)")
    a = ap.parse_args()

    if os.path.basename(a.library) != LIBRARY:
        sys.exit(f"build_wheel: --library must be {LIBRARY}, not {a.library}")
    for m in a.module:
        if os.path.basename(m) not in MODULES:
            sys.exit(f"build_wheel: unknown GPU module {m} (the loader looks for {', '.join(MODULES)})")
    for f in [a.library] + a.module:
        if not os.path.isfile(f):
            sys.exit(f"build_wheel: {f} does not exist (build first: make build)")

    shutil.rmtree(a.work, ignore_errors=True)
    pkg = os.path.join(a.work, PACKAGE)
    os.makedirs(pkg)
    for f in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copyfile(os.path.join(HERE, f), os.path.join(a.work, f))
    for f in glob.glob(os.path.join(HERE, PACKAGE, "*.py")):
        shutil.copyfile(f, os.path.join(pkg, os.path.basename(f)))
    with open(os.path.join(pkg, "_version.py"), "w") as f:
        f.write('# Written by build_wheel.py from CMakeLists.txt\'s project version.\n')
        f.write(f'__version__ = "{a.version}"\n')
    # The modules go beside the library: it loads them from its own folder.
    for f in [a.library] + a.module:
        stage_library(f, os.path.join(pkg, os.path.basename(f)))

    os.makedirs(a.out, exist_ok=True)
    for old in glob.glob(os.path.join(a.out, "onnxruntime_ep_hipdnn-*.whl")):
        os.remove(old)
    env = dict(os.environ, PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index",
           "--no-cache-dir", "--wheel-dir", os.path.abspath(a.out), "."]
    r = subprocess.run(cmd, cwd=a.work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stdout)
        sys.exit(f"build_wheel: pip wheel failed ({' '.join(cmd)}); it needs setuptools, wheel and pip "
                 "for this python (Debian: python3-setuptools python3-wheel python3-pip)")
    wheels = glob.glob(os.path.join(a.out, "onnxruntime_ep_hipdnn-*.whl"))
    if len(wheels) != 1:
        sys.stderr.write(r.stdout)
        sys.exit(f"build_wheel: expected one wheel in {a.out}, found {wheels}")
    print(wheels[0])


if __name__ == "__main__":
    main()
