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
import inspect
import os
import sys


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
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from export_common import export_many, parse_args
    a = parse_args(__doc__)

    try:
        import torch
        import torchvision as tv
    except ImportError as e:
        print(f"export_torchvision: cannot import torch/torchvision ({e}); on Debian install "
              "python3-torchvision and python3-onnx (scripts/fetch-deps.sh does)", file=sys.stderr)
        return 2


    def one(name, path):
        torch.manual_seed(0)
        export_one(torch, build_model(tv, name), path, a.opset)
    return export_many("export_torchvision", __file__, a.out, a.models, a.force, one,
                       lambda: f"torch {torch.__version__}, torchvision {tv.__version__}, opset {a.opset}")

if __name__ == "__main__":
    sys.exit(main())
