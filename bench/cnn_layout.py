#!/usr/bin/env python3
"""Channels first against channels last (provider option prefer_nhwc) for CNNs, in one process.

For each torchvision model, precision and batch: two sessions of our EP on
the same export, prefer_nhwc=0 and =1 (the default), each checked against the CPU EP's fp32
output (rel L2), then timed in alternating rounds with inputs and outputs on
the GPU (bench.py's DeviceIO). --ab-env VAR=VALUE adds a third session,
channels last with VAR=VALUE in the environment as its plans are built (an
A/B of one of the EP's switches, e.g. HIPDNN_EP_LAYOUT_DEPTHWISE=0),
checked and timed in the same rounds ("ab"). Prints a markdown table;
--json writes the raw numbers. GPU machine only (torch, onnxruntime, our EP
built).
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hdep  # noqa: E402
from hdep import log  # noqa: E402


def export_half(torch, model, path):
    """model in fp16 -> ONNX at path (classic exporter, dynamic batch), traced on the GPU."""
    m = model.half().cuda()
    x = torch.randn(2, 3, 224, 224, dtype=torch.float16, device="cuda")
    with torch.no_grad():
        torch.onnx.export(m, (x,), path, input_names=["input"], output_names=["output"], opset_version=17,
                          do_constant_folding=True, dynamo=False,
                          dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", default=["resnet50"])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 32])
    ap.add_argument("--precisions", nargs="+", default=["fp16", "fp32"], choices=["fp16", "bf16", "fp32", "export16"],
                    help="provider option precision on the fp32 export; export16: the model exported in fp16")
    ap.add_argument("--rounds", type=int, default=5, help="alternating timing rounds per layout")
    ap.add_argument("--iters", type=int, default=20, help="runs per round")
    ap.add_argument("--io", default="ortvalue-gpu-vendor", help="bench.py's device I/O way")
    ap.add_argument("--work", default=os.environ.get("TMPDIR", "/tmp") + "/hipdnn-bench")
    ap.add_argument("--json", help="write the raw numbers here")
    ap.add_argument("--ab-env", metavar="VAR=VALUE", help="a third session, channels last, built with VAR=VALUE set")
    a = ap.parse_args()

    import numpy as np
    import onnxruntime as ort
    import torch
    from bench import DeviceIO
    os.makedirs(a.work, exist_ok=True)
    hdep.register(ort)
    dev = hdep.gpu_device(ort)
    log(f"GPU: {hdep.gpu_name()}; {hdep.versions()}")
    sync = torch.cuda.synchronize
    rows = []
    for name in a.models:
        path = os.path.join(a.work, f"{name}.onnx")
        if not os.path.exists(path):
            hdep.export_torchvision(name, path)
        cpu = hdep.cpu_session(ort, path)
        inp = cpu.get_inputs()[0].name
        for prec in a.precisions:
            last = "1"
            model, opts, xtype = path, {"precision": prec}, np.float32
            if prec == "export16":  # the same weights in fp16, exported from the GPU
                model, opts, xtype = os.path.join(a.work, f"{name}-fp16.onnx"), {}, np.float16
                if not os.path.exists(model):
                    export_half(torch, hdep.build_torchvision(name, seed=0), model)
            sess = {"first": hdep.ep_session(ort, model, dev, dict(opts, prefer_nhwc="0")),
                    "last": hdep.ep_session(ort, model, dev, dict(opts, prefer_nhwc=last))}
            if a.ab_env:
                with hdep.env_set(a.ab_env):
                    sess["ab"] = hdep.ep_session(ort, model, dev, dict(opts, prefer_nhwc=last))
            for b in a.batches:
                x = np.random.default_rng(b).standard_normal((b, 3, 224, 224), dtype=np.float32)
                ref = cpu.run(None, {inp: x})
                x = x.astype(xtype)
                row = {"model": name, "precision": prec, "batch": b, "prefer_nhwc_last": last}
                ios = {}
                for k, s in sess.items():
                    d = DeviceIO(a.io, ort, torch, np, s, x, [r.shape for r in ref])
                    with hdep.env_set(a.ab_env if k == "ab" else None):  # plans are built at a shape's first run
                        d.run()
                    sync()
                    c = hdep.compare(d.fetch()[0], ref[0])
                    row[f"check_{k}"] = c
                    log(f"[{name} {prec} b{b}] channels {k} vs CPU EP: {hdep.compare_str(c)}")
                    if c["pass"]:
                        ios[k] = d
                times = hdep.take_turns({k: d.run for k, d in ios.items()}, a.iters, a.rounds, sync)
                for k, ts in times.items():
                    row[f"{k}_ms"] = hdep.median(ts)
                    row[f"{k}_rounds_ms"] = [round(t, 4) for t in ts]
                rows.append(row)
                log(f"[{name} {prec} b{b}] first {row.get('first_ms')} ms, last {row.get('last_ms')} ms")
                del ios
            del sess
    ab = f" | ab: last with {a.ab_env} (ms) | last / ab" if a.ab_env else ""
    log(f"\n| model | precision | batch | rel L2 first | rel L2 last | channels first (ms) | channels last (ms) | last / first{ab} |")
    log("|---|---|---|---|---|---|---|---|" + ("---|---|" if a.ab_env else ""))
    for r in rows:
        f, l_ = r.get("first_ms"), r.get("last_ms")
        cell = lambda c: f"{'PASS' if c.get('pass') else 'FAIL'} {c.get('rel_l2', float('nan')):.1e}"  # noqa: E731
        extra = ""
        if a.ab_env:
            b_ = r.get("ab_ms")
            extra = f" {b_:.3f} ({cell(r.get('check_ab', {}))}) | {l_ / b_:.2f} |" if b_ and l_ else " - | - |"
        log(f"| {r['model']} | {r['precision']} | {r['batch']} | {cell(r['check_first'])} | {cell(r['check_last'])} | "
            f"{f:.3f} | {l_:.3f} | {l_ / f:.2f} |{extra}" if f and l_ else
            f"| {r['model']} | {r['precision']} | {r['batch']} | {cell(r['check_first'])} | {cell(r['check_last'])} | "
            f"{f} | {l_} | - |")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"gpu": hdep.gpu_name(), "versions": hdep.versions(), "rows": rows}, fh, indent=2, default=str)
    bad = [r for r in rows if not (r["check_first"].get("pass") and r["check_last"].get("pass")
                                   and r.get("check_ab", {"pass": True}).get("pass"))]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
