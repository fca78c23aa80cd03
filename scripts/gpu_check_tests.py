#!/usr/bin/env python3
"""Runs the project's test programs from a build made on another machine
(scripts/gpu-check.sh step b), with the GPU backend.

ctest's own file holds absolute paths of the machine that built the tree, so
this reads the test list that scripts/carry.sh saved (.carry/ctest.json: the
output of `ctest --show-only=json-v1` plus the source and build folders it was
made in) and rewrites the paths; without it, it runs every build/bin/test_*
program with each runtime. Each ORT-level test runs with the ONNX Runtime its
name says: ort129 -> --ort129 (third_party/ort-1.29, carried), ort130 ->
--ort130 (the onnxruntime Python package's own libonnxruntime.so).

Every test gets HIPDNN_EP_TEST_BACKEND=auto. Status per test: pass, fail,
skip (its skip code, 77), timeout, or not-run (a program or runtime missing
here). Exit status 1 when any test failed or timed out.
"""
import argparse
import concurrent.futures as cf
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

SKIP_LABELS = {"conformance": "run by gpu-check step d", "models": "needs build/models (CI machine only)",
               "hip": "the AMD module needs the HIP runtime, which NVIDIA machines lack"}
# Programs of the fallback list that need no ONNX Runtime: run once.
NO_ORT = {"test_harness", "test_ir", "test_pool", "test_backend_cuda"}


def props(t):
    return {p["name"]: p["value"] for p in t.get("properties", [])}


def from_manifest(path, root, build, ort):
    with open(path) as f:
        m = json.load(f)
    src_dir, bld_dir = m["source_dir"], m["build_dir"]
    tests = []

    def fix(s):
        s = s.replace(bld_dir, build)
        return s.replace(src_dir, root)

    for t in m["ctest"]["tests"]:
        p = props(t)
        name = t["name"]
        labels = p.get("LABELS", [])
        skip = next((why for lab, why in SKIP_LABELS.items() if lab in labels), None)
        cmd = [fix(c) for c in t.get("command", [])]
        env = {}
        runtime = None
        for kv in p.get("ENVIRONMENT", []):
            k, _, v = kv.partition("=")
            if k == "HIPDNN_EP_ORT_LIB":
                if "ort-1.29" in v or name.endswith("_ort129"):
                    runtime = "129"
                elif "ort-1.30" in v or name.endswith("_ort130"):
                    runtime = "130"
                v = ort.get(runtime) or ""
            else:
                v = fix(v)
            env[k] = v
        tests.append({
            "name": name, "cmd": cmd, "env": env, "runtime": runtime,
            "cwd": fix(p.get("WORKING_DIRECTORY", build)),
            "skip_code": p.get("SKIP_RETURN_CODE"),
            "will_fail": bool(p.get("WILL_FAIL", False)),
            "not_run": skip,
        })
    return tests


def fallback(root, build, ort):
    bindir = os.path.join(build, "bin")
    libdir = os.path.join(build, "lib")
    ep = os.path.join(libdir, "libhipdnn_ep.so")
    tests = []

    def add(name, cmd, runtime=None):
        env = {"HIPDNN_EP_LIB": ep}
        if runtime:
            env["HIPDNN_EP_ORT_LIB"] = ort.get(runtime) or ""
        tests.append({"name": name + (f"_ort{runtime}" if runtime else ""), "cmd": cmd, "env": env,
                      "runtime": runtime, "cwd": build, "skip_code": 77, "will_fail": False, "not_run": None})

    for exe in sorted(glob.glob(os.path.join(bindir, "test_*"))):
        b = os.path.basename(exe)
        if b in NO_ORT:
            add(b, [exe])
            continue
        for v in ("129", "130"):
            add(b, [exe], v)
            if b == "test_conv":
                add("harness_selfcheck", [exe, "--cpu-self-check"], v)
            if b == "test_ep_load":
                add("ep_dup_register", [exe, "--dup-registration"], v)
    run = os.path.join(bindir, "hipdnn-ep-run")
    if os.path.exists(run):
        for v in ("129", "130"):
            add("run_default", [run, "--iters", "2", "--batch", "2"], v)
    return tests


def run_one(t, base_env, timeout):
    r = {"name": t["name"], "cmd": " ".join(t["cmd"]), "runtime": t["runtime"]}
    if t["not_run"]:
        r.update(status="not-run", why=t["not_run"])
        return r
    exe = t["cmd"][0] if t["cmd"] else ""
    if not exe:
        r.update(status="not-run", why="no command (its target was not built)")
        return r
    if not (os.path.exists(exe) or shutil.which(exe)):
        r.update(status="not-run", why=f"{exe} not found here")
        return r
    if t["runtime"] and not t["env"].get("HIPDNN_EP_ORT_LIB"):
        r.update(status="not-run", why=f"no ONNX Runtime 1.{t['runtime'][1:]} library here")
        return r
    env = dict(base_env)
    env.update(t["env"])
    env["HIPDNN_EP_TEST_BACKEND"] = "auto"
    os.makedirs(t["cwd"], exist_ok=True)
    t0 = time.time()
    p = subprocess.Popen(t["cmd"], cwd=t["cwd"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        rc = p.returncode
        status = None
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        rc = None
        status = "timeout"
    r["seconds"] = round(time.time() - t0, 2)
    r["rc"] = rc
    text = out.decode(errors="replace")
    if status is None:
        if t["skip_code"] is not None and rc == int(t["skip_code"]):
            status = "skip"
        else:
            ok = rc == 0
            status = "pass" if ok != t["will_fail"] else "fail"
            if rc is not None and rc < 0:
                r["why"] = f"killed by signal {-rc}"
    r["status"] = status
    r["output"] = text[-6000:]
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.getcwd())
    ap.add_argument("--build", default=None)
    ap.add_argument("--manifest", default=None, help="default: ROOT/.carry/ctest.json when present")
    ap.add_argument("--ort129", default="")
    ap.add_argument("--ort130", default="")
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--timeout", type=float, default=120, help="seconds per test")
    ap.add_argument("--require-pass", default="",
                    help="regex: tests whose name matches must pass (a skip counts as a failure)")
    ap.add_argument("--skips-fail", action="store_true",
                    help="a test that skips (exit 77) fails: on the GPU machine every test has its GPU")
    ap.add_argument("--json")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    build = os.path.abspath(a.build or os.path.join(root, "build"))
    ort = {"129": os.path.abspath(a.ort129) if a.ort129 and os.path.exists(a.ort129) else "",
           "130": os.path.abspath(a.ort130) if a.ort130 and os.path.exists(a.ort130) else ""}
    manifest = a.manifest or os.path.join(root, ".carry", "ctest.json")
    if os.path.exists(manifest):
        tests = from_manifest(manifest, root, build, ort)
        source = f"ctest list {manifest}"
    else:
        tests = fallback(root, build, ort)
        source = "build/bin/test_* (no .carry/ctest.json: run scripts/carry.sh before the copy)"
    print(f"tests from {source}: {len(tests)}; ORT 1.29: {ort['129'] or 'missing'}; ORT 1.30: {ort['130'] or 'missing'}",
          flush=True)
    t0 = time.time()
    results = []
    with cf.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        futs = [ex.submit(run_one, t, os.environ, a.timeout) for t in tests]
        for f in cf.as_completed(futs):
            r = f.result()
            results.append(r)
            extra = f" ({r['why']})" if r.get("why") else ""
            secs = f" {r['seconds']:.1f} s" if "seconds" in r else ""
            print(f"  {r['status'].upper():8s} {r['name']}{secs}{extra}", flush=True)
    order = {t["name"]: i for i, t in enumerate(tests)}
    results.sort(key=lambda r: order.get(r["name"], 0))
    counts = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    for r in results:
        if r["status"] in ("fail", "timeout"):
            print(f"\n----- {r['status'].upper()}: {r['name']} (exit {r.get('rc')}): {r['cmd']}")
            print(r.get("output", "")[-4000:])
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    print(f"\ntests: {summary} in {time.time() - t0:.0f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"source": source, "ort": ort, "counts": counts, "results": results}, f, indent=2)
    bad = counts.get("fail", 0) + counts.get("timeout", 0)
    if a.skips_fail:
        for r in results:
            if r["status"] == "skip":
                print(f"SKIPPED on a machine with a GPU (a failure here): {r['name']}: "
                      f"{(r.get('output') or '').strip().splitlines()[-1:] or ''}")
        bad += counts.get("skip", 0)
    if a.require_pass:
        import re
        rx = re.compile(a.require_pass)
        must = [r for r in results if rx.search(r["name"])]
        unmet = [r for r in must if r["status"] != "pass"]
        for r in unmet:
            print(f"REQUIRED to pass on this machine but {r['status']}: {r['name']} {r.get('why', '')}")
        if not must:
            print(f"REQUIRED: no test matches /{a.require_pass}/")
        bad += len(unmet) + (0 if must else 1)
    ran = counts.get("pass", 0) + counts.get("fail", 0) + counts.get("timeout", 0)
    print(f"{counts.get('pass', 0)} passed, {bad} failed")
    return 1 if bad or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
