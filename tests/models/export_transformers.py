#!/usr/bin/env python3
"""Exports small transformer-family models (random weights) to ONNX for the
model tests: the graphs torch's exporter makes for BERT, GPT, ViT and
ConvNeXt, at toy sizes so the reference backend runs them in CI.

    export_transformers.py --out DIR [--opset 17] [--force] MODEL [MODEL...]

MODEL is one of:
  bert         post-LN encoder: word + position + token-type embeddings,
               additive mask from an int64 attention mask, GELU (erf)
  gpt          pre-LN decoder: causal mask from torch.tril + masked_fill
               (Trilu / Not / Where), tanh GELU (Pow), tied LM head
  vit          conv patch embedding, class token (Expand + Concat), learned
               position embedding, encoder, classifier head
  convnext     ConvNeXt blocks: 7x7 depthwise conv, channels-last LayerNorm
               (Transpose), MLP with GELU, layer scale, residual; pooled head
  torch_encoder  torch.nn.TransformerEncoder, exported with autograd on so
               torch's fused fast path stays out of the graph (torch 2.x's
               exporter bakes the example sequence length, 8, into this one:
               run it at sequence 8 there)
Inputs have a symbolic batch (and sequence, for the text models) dim; token
ids are "input_ids" (values < 16 are valid), masks "attention_mask".
Every weight is random (no zero-initialised head): outputs carry signal.

Works with Debian's /usr/bin/python3 (torch 1.13, python3-onnx: the CI
machine) and torch 2.x (the classic exporter, dynamo=False).
Exit status: 0 all exported; 1 an export failed; 2 torch missing.
"""
import inspect
import math
import os
import sys


def log(msg):
    print(f"export_transformers: {msg}", flush=True)


def build(torch, name):
    nn = torch.nn
    F = torch.nn.functional
    D, H, V, L = 32, 4, 64, 2

    class Attention(nn.Module):
        def __init__(self, causal=False):
            super().__init__()
            self.qkv, self.out, self.causal = nn.Linear(D, 3 * D), nn.Linear(D, D), causal

        def forward(self, x, mask=None):
            b, s, _ = x.shape
            q, k, v = self.qkv(x).split(D, dim=-1)
            q, k, v = (t.view(b, s, H, D // H).transpose(1, 2) for t in (q, k, v))
            a = q @ k.transpose(-1, -2) / math.sqrt(D // H)
            if mask is not None:
                a = a + mask
            if self.causal:
                keep = torch.tril(torch.ones(s, s, dtype=torch.bool, device=x.device))
                a = a.masked_fill(~keep, float("-inf"))
            y = (a.softmax(-1) @ v).transpose(1, 2).reshape(b, s, D)
            return self.out(y)

    class Block(nn.Module):
        def __init__(self, causal=False, pre_ln=False, gelu="none"):
            super().__init__()
            self.attn = Attention(causal)
            self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(approximate=gelu), nn.Linear(4 * D, D))
            self.pre_ln = pre_ln

        def forward(self, x, mask=None):
            if self.pre_ln:
                x = x + self.attn(self.ln1(x), mask)
                return x + self.mlp(self.ln2(x))
            x = self.ln1(x + self.attn(x, mask))
            return self.ln2(x + self.mlp(x))

    class Bert(nn.Module):
        def __init__(self):
            super().__init__()
            self.word, self.pos, self.token_type = nn.Embedding(V, D), nn.Embedding(128, D), nn.Embedding(2, D)
            self.ln = nn.LayerNorm(D)
            self.blocks = nn.ModuleList(Block() for _ in range(L))

        def forward(self, input_ids, attention_mask, token_type_ids):
            s = input_ids.shape[1]
            pos = torch.arange(s, device=input_ids.device).unsqueeze(0)
            x = self.ln(self.word(input_ids) + self.pos(pos) + self.token_type(token_type_ids))
            mask = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
            for blk in self.blocks:
                x = blk(x, mask)
            return x

    class Gpt(nn.Module):
        def __init__(self):
            super().__init__()
            self.word, self.pos = nn.Embedding(V, D), nn.Embedding(128, D)
            self.blocks = nn.ModuleList(Block(causal=True, pre_ln=True, gelu="tanh") for _ in range(L))
            self.ln = nn.LayerNorm(D)

        def forward(self, input_ids):
            s = input_ids.shape[1]
            pos = torch.arange(s, device=input_ids.device)
            x = self.word(input_ids) + self.pos(pos)
            for blk in self.blocks:
                x = blk(x)
            return self.ln(x) @ self.word.weight.t()  # tied head: logits over the vocabulary

    class Vit(nn.Module):
        def __init__(self):
            super().__init__()
            self.patch = nn.Conv2d(3, D, kernel_size=8, stride=8)
            self.cls = nn.Parameter(torch.randn(1, 1, D))
            self.pos = nn.Parameter(torch.randn(1, 17, D) * 0.1)
            self.blocks = nn.ModuleList(Block(pre_ln=True) for _ in range(L))
            self.ln, self.head = nn.LayerNorm(D), nn.Linear(D, 10)

        def forward(self, pixel_values):
            x = self.patch(pixel_values).flatten(2).transpose(1, 2)
            x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x)[:, 0])

    class ConvNeXtBlock(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
            self.ln = nn.LayerNorm(c)
            self.fc1, self.fc2 = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)
            self.gamma = nn.Parameter(torch.rand(c) * 0.5 + 0.5)

        def forward(self, x):
            y = self.dw(x).permute(0, 2, 3, 1)
            y = self.gamma * self.fc2(F.gelu(self.fc1(self.ln(y))))
            return x + y.permute(0, 3, 1, 2)

    class ConvNeXt(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem, self.stem_ln = nn.Conv2d(3, D, 4, stride=4), nn.LayerNorm(D)
            self.blocks = nn.Sequential(ConvNeXtBlock(D), ConvNeXtBlock(D))
            self.ln, self.head = nn.LayerNorm(D), nn.Linear(D, 10)

        def forward(self, x):
            x = self.stem_ln(self.stem(x).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
            x = self.blocks(x)
            return self.head(self.ln(x.mean([-2, -1])))

    class TorchEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(D, H, 4 * D, dropout=0.0, batch_first=True)
            self.enc = nn.TransformerEncoder(layer, L)

        def forward(self, x):
            return self.enc(x)

    models = {"bert": Bert, "gpt": Gpt, "vit": Vit, "convnext": ConvNeXt, "torch_encoder": TorchEncoder}
    if name not in models:
        raise SystemExit(f"export_transformers: no model '{name}' (have {', '.join(models)})")
    model = models[name]().eval()
    b, s = 2, 8
    ids = torch.randint(0, 16, (b, s))
    seq = {0: "batch", 1: "sequence"}
    if name == "bert":
        mask = torch.ones(b, s, dtype=torch.int64)
        mask[1, 5:] = 0
        types = torch.randint(0, 2, (b, s))
        return model, (ids, mask, types), ["input_ids", "attention_mask", "token_type_ids"], \
            {"input_ids": seq, "attention_mask": seq, "token_type_ids": seq, "output": seq}
    if name == "gpt":
        return model, (ids,), ["input_ids"], {"input_ids": seq, "output": seq}
    if name == "torch_encoder":
        return model, (torch.randn(b, s, D),), ["input"], {"input": seq, "output": seq}
    return model, (torch.randn(b, 3, 32, 32),), ["pixel_values"], {"pixel_values": {0: "batch"}, "output": {0: "batch"}}


def export_one(torch, name, path, opset):
    model, args, names, axes = build(torch, name)
    kwargs = dict(input_names=names, output_names=["output"], opset_version=opset, do_constant_folding=True,
                  dynamic_axes=axes)
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    tmp = path + ".tmp"
    if name == "torch_encoder":  # autograd on: torch's fused fast path would hide the graph
        torch.onnx.export(model, args, tmp, **kwargs)
    else:
        with torch.no_grad():
            torch.onnx.export(model, args, tmp, **kwargs)
    os.replace(tmp, path)


def main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from export_common import export_many, parse_args
    a = parse_args(__doc__)
    try:
        import torch
    except ImportError as e:
        print(f"export_transformers: cannot import torch ({e}); on Debian install python3-torch and "
              "python3-onnx (scripts/fetch-deps.sh does)", file=sys.stderr)
        return 2

    def one(name, path):
        torch.manual_seed(0)
        export_one(torch, name, path, a.opset)
    return export_many("export_transformers", __file__, a.out, a.models, a.force, one,
                       lambda: f"torch {torch.__version__}, opset {a.opset}")

if __name__ == "__main__":
    sys.exit(main())
