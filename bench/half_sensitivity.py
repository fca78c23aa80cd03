#!/usr/bin/env python3
"""Where half-precision rounding enters a CNN's error, layer by layer (GPU machine, torch only).

    python3 bench/half_sensitivity.py [MODEL ...] [--batch 8] [--top 8] [--json FILE]

For each torchvision model (random weights, batch norms calibrated as
`bench.py --calibrate-bn` does, so every layer carries signal), the fp32
output (TF32 off) is the reference, and fp16 is emulated by rounding values
to fp16 where `precision=fp16` stores them: each convolution's and linear
layer's weight, input and output, and each residual block's output. The
relative L2 error of the logits is printed for:
  - every layer rounded (what precision=fp16 does);
  - each layer rounded alone, and every layer but it (the largest few);
  - the first N layers left fp32, for the N the option fp32_first_layers
    takes, and the last N for contrast.
Layers are counted in module order, which for torchvision's CNNs is the
order they run in (ResNet's downsample convolution, defined after conv3,
runs beside it). The point: rounding that enters early is amplified by
every layer after it, so a handful of first layers kept fp32 removes most
of the error (docs/user-guide.md, "Half precision").
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hdep  # noqa: E402


def study(torch, name, batch, top):
    model = hdep.build_torchvision(name, seed=0, calibrate_bn=True).cuda().eval()
    gen = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(batch, 3, 224, 224, device="cuda", generator=gen)
    with torch.no_grad():
        ref = model(x).double()
    layers = [(n, m) for n, m in model.named_modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    blocks = [m for m in model.modules() if type(m).__name__ in ("InvertedResidual", "Bottleneck", "BasicBlock")]
    weights = {n: m.weight.data.clone() for n, m in layers}

    def r16(t):
        return t.half().float()

    def rel(rounded):
        """rel L2 of the logits with the layers named in `rounded` in fp16 (and every block output)."""
        hooks = []
        for n, m in layers:
            if n in rounded:
                m.weight.data = r16(weights[n])
                hooks.append(m.register_forward_pre_hook(lambda mod, args: (r16(args[0]),)))
                hooks.append(m.register_forward_hook(lambda mod, args, out: r16(out)))
        hooks += [b.register_forward_hook(lambda mod, args, out: r16(out)) for b in blocks]
        with torch.no_grad():
            y = model(x).double()
        for h in hooks:
            h.remove()
        for n, m in layers:
            m.weight.data = weights[n]
        return ((y - ref).norm() / ref.norm()).item()

    names = [n for n, _ in layers]
    every = set(names)
    res = {"model": name, "batch": batch, "layers": len(names), "logits_rms": ref.pow(2).mean().sqrt().item(),
           "all": rel(every), "alone": {}, "all_but": {}, "first_fp32": {}, "last_fp32": {}}
    for n in names:
        res["alone"][n] = rel({n})
        res["all_but"][n] = rel(every - {n})
    for k in sorted({0, 1, 2, 4, 6, 8, 10, 12, 16, len(names) // 4, len(names) // 2}):
        res["first_fp32"][k] = rel(every - set(names[:k]))
        res["last_fp32"][k] = rel(every - set(names[len(names) - k:]))
    print(f"\n## {name}, batch {batch}: {len(names)} convolution/linear layers, logits rms {res['logits_rms']:.3g}\n")
    print(f"every layer in fp16 (emulated): rel L2 {res['all']:.2e}\n")
    print("| layer | rounded alone | every layer but it |")
    print("|---|---|---|")
    for n in sorted(names, key=lambda n: -res["alone"][n])[:top]:
        print(f"| {n} | {res['alone'][n]:.2e} | {res['all_but'][n]:.2e} |")
    print("\n| N layers kept fp32 | the first N | the last N |")
    print("|---|---|---|")
    for k in res["first_fp32"]:
        print(f"| {k} | {res['first_fp32'][k]:.2e} | {res['last_fp32'][k]:.2e} |")
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", default=["mobilenet_v2", "resnet50"])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--top", type=int, default=8, help="layers listed by their error alone")
    ap.add_argument("--json", help="write every number here")
    a = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("half_sensitivity: torch sees no CUDA device")
        return 2
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"# fp16 rounding by layer ({hdep.gpu_name()}; fp32 reference without TF32)")
    out = [study(torch, m, a.batch, a.top) for m in a.models]
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
