#!/usr/bin/env python3
"""Checks the profiles the EP writes (tests/profile.cmake runs it).

  check_profile.py expect DIR/expect.json
      the files tests/test_profile.c wrote: ORT's profiles (a JSON array of
      events) and the EP's own Chrome trace (profile_file, a JSON object);
  check_profile.py tool --profile FILE --report JSON --nodes A,B,... --weights N
      hipdnn-ep-run's --profile FILE and its --json report.

Each file must be JSON, hold every step of every run exactly once (one
event per step, named after the step's first ONNX node; the nodes the step
came from, together over the steps of a run, exactly the model's nodes),
with positive durations, each step inside ORT's event of its fused node,
one plan-build event per new input shape, and memory figures that add up:
weights the model's, run buffers > 0, 0 <= pool in use <= peak. Exit 1
with every problem listed."""
import argparse
import json
import sys
from collections import Counter, defaultdict

EP = "HipDNNExecutionProvider"
problems = []


def bad(msg):
    problems.append(msg)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        bad(f"{path}: not readable JSON: {e}")
        return None


def events_of(doc, kind, path):
    if kind == "trace":
        if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
            bad(f"{path}: a Chrome trace must be an object with a traceEvents list")
            return []
        return doc["traceEvents"]
    if not isinstance(doc, list):
        bad(f"{path}: ORT's profile must be a JSON array")
        return []
    return doc


def check_steps(path, events, kind, nodes, runs, shapes, backend):
    steps = [e for e in events if e.get("ph") == "X" and "step" in e.get("args", {})]
    builds = [e for e in events if e.get("args", {}).get("op_name") == "plan build"]
    if not steps:
        bad(f"{path}: no step events")
        return
    per_name = Counter(e["name"] for e in steps)
    nodes_of = {}
    for e in steps:
        a = e["args"]
        listed = a.get("nodes", "").split(",")
        if e["name"] != listed[0]:
            bad(f"{path}: step '{e['name']}' lists its nodes as '{a.get('nodes')}'")
        nodes_of.setdefault(e["name"], listed)
        if nodes_of[e["name"]] != listed:
            bad(f"{path}: step '{e['name']}' lists different nodes in two runs")
        if a.get("provider") != EP:
            bad(f"{path}: step '{e['name']}' provider {a.get('provider')!r}")
        if a.get("backend") != backend:
            bad(f"{path}: step '{e['name']}' backend {a.get('backend')!r}, expected {backend}")
        for k in ("input_type_shape", "output_type_shape"):
            v = a.get(k)
            if not isinstance(v, list) or not v or not all(isinstance(x, dict) and len(x) == 1 for x in v):
                bad(f"{path}: step '{e['name']}' {k} is {v!r}, not a list of {{type: shape}}")
        # ORT keeps whole microseconds (a step under 1 us shows as 1); the
        # trace keeps fractions. A GPU step below the event timer's
        # resolution may measure 0 ns.
        dur_ns = int(a.get("dur_ns", "-1"))
        if not e.get("dur", 0) > 0 and not (backend != "ref" and kind == "trace" and e.get("dur") == 0):
            bad(f"{path}: step '{e['name']}' has duration {e.get('dur')}")
        if dur_ns < 0 or (backend == "ref" and dur_ns == 0):
            bad(f"{path}: step '{e['name']}' dur_ns {a.get('dur_ns')}")
        if not e.get("ts", -1) >= 0:
            bad(f"{path}: step '{e['name']}' timestamp {e.get('ts')}")
    for name, n in per_name.items():
        if n != runs:
            bad(f"{path}: step '{name}' appears {n} times, expected once in each of {runs} run(s)")
    covered = Counter(x for listed in nodes_of.values() for x in listed)
    if set(covered) != set(nodes) or any(c != 1 for c in covered.values()):
        bad(f"{path}: the steps' nodes {dict(covered)} are not the model's nodes {sorted(nodes)}, each once")
    if len(builds) != shapes:
        bad(f"{path}: {len(builds)} plan-build events, expected {shapes} (one per new input shape)")
    if kind == "ort":
        check_nesting(path, events, steps)
    print(f"{path}: {len(steps)} step events ({len(per_name)} steps x {runs} runs), {len(builds)} plan builds")


def check_nesting(path, events, steps):
    """Each step lies inside ORT's event of the fused node that ran it, on the
    same thread (whole microseconds both: allow 3 us of rounding)."""
    fused = defaultdict(list)
    for e in events:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time") and \
                e.get("args", {}).get("provider") == EP:
            fused[e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
    for e in steps:
        t0, t1 = e["ts"], e["ts"] + e["dur"]
        if not any(a - 3 <= t0 and t1 <= b + 3 for a, b in fused.get(e["tid"], [])):
            bad(f"{path}: step '{e['name']}' [{t0}, {t1}] us on thread {e['tid']} is inside none of ORT's "
                f"events of our fused nodes")


def check_memory_event(path, events, weights, backend):
    mem = [e for e in events if e.get("name") == "hipdnn_ep_memory"]
    if len(mem) != 1:
        bad(f"{path}: {len(mem)} hipdnn_ep_memory events, expected 1")
        return None
    a = mem[0]["args"]
    try:
        v = {k: int(a[k]) for k in ("weights_bytes", "run_buffers_bytes", "plan_bytes", "pool_in_use_bytes",
                                    "pool_cached_bytes", "pool_peak_bytes", "pool_limit_bytes")}
    except (KeyError, ValueError) as e:
        bad(f"{path}: hipdnn_ep_memory args {a}: {e}")
        return None
    device = a.get("memory") == "device"
    if a.get("backend") != backend or device != (backend != "ref"):
        bad(f"{path}: memory event says backend {a.get('backend')} memory {a.get('memory')}")
    check_figures(path, v["weights_bytes"], v["run_buffers_bytes"], v["pool_in_use_bytes"], v["pool_peak_bytes"],
                  weights, device)
    print(f"{path}: memory {a}")
    return a


def check_figures(where, w, run, in_use, peak, weights, device):
    if w != weights:
        bad(f"{where}: weights {w} bytes, the model's are {weights}")
    if not run > 0:
        bad(f"{where}: run buffers {run} bytes")
    if not 0 <= in_use <= peak:
        bad(f"{where}: pool in use {in_use}, peak {peak}")
    # The pool holds the run buffers; on a GPU the weights too.
    if in_use < run + (w if device else 0):
        bad(f"{where}: pool in use {in_use} < what the session holds in it ({run} + {w if device else 0})")


def check_trace(path, doc, events, weights, runs, backend):
    meta = [e for e in events if e.get("ph") == "M" and e.get("name") == "process_name"]
    if len(meta) != 1:
        bad(f"{path}: {len(meta)} process_name records")
    if doc.get("otherData", {}).get("dropped_events") != 0:
        bad(f"{path}: otherData {doc.get('otherData')}")
    counters = [e for e in events if e.get("ph") == "C"]
    if len(counters) != runs:
        bad(f"{path}: {len(counters)} memory samples, expected one per run ({runs})")
    for e in counters:
        a = e["args"]
        if not all(isinstance(x, int) for x in a.values()):
            bad(f"{path}: counter args {a} are not numbers")
            continue
        check_figures(f"{path} sample at {e['ts']} us", a["weights"], a["run buffers"], a["pool in use"],
                      a["pool peak"], weights, backend != "ref")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="mode", required=True)
    e = sub.add_parser("expect")
    e.add_argument("expect")
    t = sub.add_parser("tool")
    t.add_argument("--profile", required=True)
    t.add_argument("--report", required=True)
    t.add_argument("--nodes", required=True)
    t.add_argument("--weights", type=int, required=True)
    a = ap.parse_args()
    if a.mode == "expect":
        ex = load(a.expect)
        if ex is None:
            return 1
        for f in ex["files"]:
            doc = load(f["path"])
            if doc is None:
                continue
            evs = events_of(doc, f["kind"], f["path"])
            check_steps(f["path"], evs, f["kind"], ex["nodes"], f["runs"], f["shapes"], ex["backend"])
            if f["kind"] == "ort":
                check_memory_event(f["path"], evs, ex["weights_bytes"], ex["backend"])
            else:
                check_trace(f["path"], doc, evs, ex["weights_bytes"], f["runs"], ex["backend"])
    else:
        rep = load(a.report)
        doc = load(a.profile)
        if rep is None or doc is None:
            return 1
        backend = rep.get("backend")
        evs = events_of(doc, "ort", a.profile)
        # The tool profiles one run at a shape it has run before: no plan build.
        check_steps(a.profile, evs, "ort", a.nodes.split(","), 1, 0, backend)
        ev = check_memory_event(a.profile, evs, a.weights, backend)
        m = rep.get("memory")
        if not isinstance(m, dict):
            bad(f"{a.report}: memory is {m!r}")
        elif ev is not None:
            for k, v in m.items():
                if str(v) != str(ev.get(k)):
                    bad(f"{a.report}: memory {k} = {v}, the profile says {ev.get(k)}")
        if rep.get("profile") != a.profile:
            bad(f"{a.report}: profile is {rep.get('profile')!r}")
    for p in problems:
        print("FAIL", p, file=sys.stderr)
    print("check_profile:", "FAIL" if problems else "PASS")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
