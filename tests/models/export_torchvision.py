#!/usr/bin/env python3
"""Exports torchvision models (random weights) to ONNX for the model tests.

    export_torchvision.py --out DIR [--opset 17] [--force] MODEL [MODEL...]

Writes DIR/MODEL.onnx for each MODEL (a torchvision.models constructor name:
resnet50, mobilenet_v2, ...): weights=None, eval mode, seeded, opset 17,
input "input" [batch, 3, 224, 224] with a dynamic batch axis, output "output".
A model file newer than this script is kept (--force exports anyway).

Works with Debian's /usr/bin/python3 (torch 1.13 + torchvision 0.14, the CI
machine: python3-torchvision, python3-onnx) and with torch 2.x, where the
classic TorchScript exporter is asked for with dynamo=False when that exists.
Exit status: 0 all exported; 1 an export failed; 2 torch/torchvision missing.
"""
import argparse
import inspect
import os
import sys
import time


def log(msg):
    print(f"export_torchvision: {msg}", flush=True)


def build_model(tv, name):
    ctor = getattr(tv.models, name, None)
    if ctor is None or not callable(ctor):
        raise SystemExit(f"export_torchvision: torchvision.models has no model '{name}'")
    params = inspect.signature(ctor).parameters
    if "weights" in params:
        model = ctor(weights=None)
    else:  # torchvision < 0.13
        model = ctor(pretrained=False)
    return model.eval()


def export_one(torch, model, path, opset, batch=1, size=224):
    x = torch.randn(batch, 3, size, size)
    kwargs = dict(
        input_names=["input"],
        output_names=["output"],
        opset_version=opset,
        do_constant_folding=True,
        dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
    )
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False  # the classic exporter (torch >= 2.5 default may differ)
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, (x,), tmp, **kwargs)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--force", action="store_true", help="export even if an up-to-date file exists")
    ap.add_argument("models", nargs="+")
    a = ap.parse_args()

    try:
        import torch
        import torchvision as tv
    except ImportError as e:
        print(f"export_torchvision: cannot import torch/torchvision ({e}); on Debian install "
              "python3-torchvision and python3-onnx (scripts/fetch-deps.sh does)", file=sys.stderr)
        return 2

    os.makedirs(a.out, exist_ok=True)
    me = os.path.getmtime(os.path.abspath(__file__))
    rc = 0
    for name in a.models:
        path = os.path.join(a.out, f"{name}.onnx")
        if not a.force and os.path.exists(path) and os.path.getmtime(path) >= me and os.path.getsize(path) > 0:
            log(f"{path} is up to date")
            continue
        t0 = time.time()
        try:
            torch.manual_seed(0)
            model = build_model(tv, name)
            export_one(torch, model, path, a.opset)
        except SystemExit:
            raise
        except Exception as e:  # report and go on with the next model
            print(f"export_torchvision: {name}: export failed: {type(e).__name__}: {e}", file=sys.stderr)
            rc = 1
            continue
        log(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB in {time.time() - t0:.1f} s "
            f"(torch {torch.__version__}, torchvision {tv.__version__}, opset {a.opset})")
    return rc


if __name__ == "__main__":
    sys.exit(main())
