#!/usr/bin/env python3
"""Transformer benchmarks on the GPU machine: our EP against torch, one process.

    python3 bench/tx_bench.py [MODEL ...] [--iters N] [--out DIR] [--reuse-exports]

MODEL (default: all): bert (BERT-base, seq 128, batch 1 and 8; ids + mask +
token types), bert_opt (the same export after ONNX Runtime's transformers
optimizer: com.microsoft Attention, SkipLayerNormalization, BiasGelu,
EmbedLayerNormalization), distilbert (seq 128, batch 1), gpt2 (seq 128, batch 1, no
cache; torch's dynamo exporter, opset 18), vit (torchvision ViT-B/16, batch
1 and 8), convnext (torchvision ConvNeXt-T, batch 1 and 32). Random weights
(seeded; ViT's zero-initialised head is filled so outputs carry signal).

Per row: where ORT placed the nodes (ours / total, and how many partitions
our EP got), session creation time, the check of our output against the
CPU EP (rel L2 < 1e-2; for models with an attention mask, again with key
padding in it, "padded": the timed inputs keep every token), and median ms of: ours with host I/O, ours with the
inputs and outputs on the GPU (IOBinding), ours with provider option
precision=fp16 (device I/O; its rel L2 against the fp32 CPU EP beside it,
same bar), torch fp32 CUDA graph (torch's default: matmuls without TF32),
torch fp32 CUDA graph with TF32 allowed, torch fp16 CUDA graph. Ratios:
ours (device I/O) to torch fp32, ours fp16 to torch fp16, same process.
--no-fp16 leaves our fp16 session out. --ab-env VAR=VALUE adds a second
precision=fp16 session whose plans are built with VAR=VALUE in the
environment (an A/B of one of the EP's switches, e.g.
HIPDNN_EP_LAYOUT_DEPTHWISE=0, in one process), checked against the CPU EP
too; --ab-option KEY=VALUE (repeatable) gives that session a provider
option instead or as well (e.g. half_gelu=exact). The fp16 columns (ours_fp16, ours_fp16_ab, torch_fp16) are timed
taking turns, --rounds times (default 3), each the least of its round
medians, so what drifts over a run lands on both sides of the ratio alike
(a row can read 5-10% slower late in a process than first: benchmarks.md,
2026-11-28 17:36).
Writes OUT/transformers.md and OUT/transformers.json (OUT: $OUT or
./bench-out). Needs transformers for bert/distilbert/gpt2 (skipped
otherwise, with a note).
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hdep  # noqa: E402

ROWS = {"bert": [1, 8], "bert_opt": [1, 8], "distilbert": [1], "gpt2": [1], "vit": [1, 8], "convnext": [1, 32]}
SEQ = 128


def log(msg):
    print(f"transformers: {msg}", flush=True)


def median_ms(fn, iters, warmup, sync):
    return hdep.time_fn(fn, iters, warmup, sync)["median_ms"]


def build(name, torch):
    """(torch module, example inputs dict for batch 1, output name, exporter)."""
    torch.manual_seed(0)
    if name in ("vit", "convnext"):
        import torchvision
        if name == "vit":
            torch.backends.mha.set_fastpath_enabled(False)
            m = torchvision.models.vit_b_16(weights=None)
            torch.nn.init.normal_(m.heads.head.weight, std=0.02)  # zero-initialised otherwise
        else:
            m = torchvision.models.convnext_tiny(weights=None)
        return m.eval(), {"pixel_values": torch.randn(1, 3, 224, 224)}, "classic"
    ids = torch.randint(0, 1000, (1, SEQ))
    if name == "gpt2":
        from transformers import GPT2Config, GPT2Model
        m = GPT2Model(GPT2Config(use_cache=False))
        return m.eval(), {"input_ids": ids}, "dynamo"
    if name == "distilbert":
        from transformers import DistilBertConfig, DistilBertModel
        m = DistilBertModel(DistilBertConfig())
        return m.eval(), {"input_ids": ids, "attention_mask": torch.ones(1, SEQ, dtype=torch.int64)}, "classic"
    from transformers import BertConfig, BertModel
    m = BertModel(BertConfig(attn_implementation="eager") if name == "bert_opt" else BertConfig())
    return m.eval(), {"input_ids": ids, "attention_mask": torch.ones(1, SEQ, dtype=torch.int64),
                      "token_type_ids": torch.zeros(1, SEQ, dtype=torch.int64)}, "classic"


def positional(torch, m, names):
    """m as a module of positional inputs (in names' order) giving one tensor:
    the last hidden state, or the first output."""

    class Fwd(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *args):
            y = self.inner(*args) if names == ["pixel_values"] else self.inner(**dict(zip(names, args)))
            if hasattr(y, "last_hidden_state"):
                return y.last_hidden_state
            return y[0] if isinstance(y, (tuple, list)) else y

    return Fwd(m).eval()


def export(name, torch, m, example, exporter, path, reuse=False):
    """(the positional module torch times, seconds the export took; None
    when reuse found path already there)."""
    names = list(example)
    t = time.time()
    f = positional(torch, m, names)
    if reuse and os.path.exists(path):
        return f, None
    args = tuple(example[k] for k in names)
    dyn = {k: ({0: "batch"} if k == "pixel_values" else {0: "batch", 1: "sequence"}) for k in names}
    with torch.no_grad():
        if exporter == "dynamo":
            b = torch.export.Dim("batch", min=1, max=64)
            s = torch.export.Dim("sequence", min=2, max=1024)
            # forward(*args): one varargs entry holding a spec per input
            prog = torch.onnx.export(f, args, input_names=names, output_names=["output"], dynamo=True, opset_version=18,
                                     dynamic_shapes=(tuple({0: b, 1: s} for _ in names),))
            prog.save(path)
        else:
            torch.onnx.export(f, args, path, input_names=names, output_names=["output"], opset_version=17,
                              dynamic_axes=dict(dyn, output={0: "batch"}), do_constant_folding=True, dynamo=False)
    return f, round(time.time() - t, 1)


def inputs_for(example, b, np):
    out = {}
    for k, v in example.items():
        a = v.numpy()
        out[k] = np.repeat(a, b, axis=0) if b > 1 else a
    return out


def torch_graph(torch, f, feeds, dtype=None, tf32=False):
    """(graph, output tensor) of f on feeds (float inputs cast to dtype) captured
    in a CUDA graph, TF32 allowed in its matmuls and convolutions or not."""
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    g = f if dtype is None else f.to(dtype)
    xs = []
    for v in feeds.values():
        t = torch.from_numpy(v).cuda()
        if dtype is not None and t.is_floating_point():
            t = t.to(dtype)
        xs.append(t)
    graph, y = hdep.torch_capture(torch, g, *xs)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = True
    graph.inputs = xs  # the graph reads them at every replay
    return graph, y


def time_turns(row, timers, a, sync):
    """row's times of the timers (key -> fn), taking turns (hdep.take_turns),
    each the least of its round medians; empties timers."""
    if not timers:
        return
    ts = hdep.take_turns(timers, a.iters, a.rounds, sync)
    row["times"].update({k: min(v) for k, v in ts.items()})
    row["rounds"] = ts
    log(f"[{row['model']} b{row['batch']}] taking turns, {a.rounds} rounds: " +
        ", ".join(f"{k} {[round(x, 3) for x in v]}" for k, v in ts.items()))
    timers.clear()


def padded(feeds):
    """feeds with key padding in attention_mask (None without one): batch
    item b keeps its first SEQ - (23 + 37 b) % (SEQ - 8) tokens, and at
    batch 4 and up item 3 keeps none (a sequence with every key masked).
    The timed feeds keep every token; this checks the masking itself."""
    m = feeds.get("attention_mask")
    if m is None:
        return None
    m = m.copy()
    n, s = m.shape
    for b in range(n):
        m[b, s - (23 + 37 * b) % (s - 8):] = 0
        if b == 3:
            m[b, :] = 0
    return dict(feeds, attention_mask=m)


def check_padded(row, key, sess, cpu, feeds):
    """row[key]: sess's output against the CPU EP's on padded(feeds)."""
    pf = padded(feeds)
    if pf is None or sess is None:
        return
    try:
        row[key] = c = hdep.compare(sess.run(None, pf)[0], cpu.run(None, pf)[0])
        log(f"[{row['model']} b{row['batch']}] {key}: {hdep.compare_str(c)}")
    except Exception as e:
        row[key] = {"pass": False, "why": f"run failed: {str(e)[:300]}"}


def first_output(io, keep, nfeeds):
    """Output 0 of a device_io binding, on the host: through the session's
    data transfer (our EP's copy), else the bound OrtValue."""
    try:
        return io.copy_outputs_to_cpu()[0]
    except Exception:
        return keep[nfeeds].numpy()


def device_io(ort, np, sess, feeds, out_shapes):
    io = sess.io_binding()
    keep = []
    for k, v in feeds.items():
        ov = ort.OrtValue.ortvalue_from_numpy(v, "gpu", 0, hdep.NVIDIA)
        io.bind_ortvalue_input(k, ov)
        keep.append(ov)
    for o, s in zip(sess.get_outputs(), out_shapes):
        ov = ort.OrtValue.ortvalue_from_shape_and_type(list(s), np.float32, "gpu", 0, hdep.NVIDIA)
        io.bind_ortvalue_output(o.name, ov)
        keep.append(ov)
    return io, keep


def bench(name, a, ort, torch, np, dev, rows):
    try:
        m, example, exporter = build(name, torch)
    except Exception as e:  # transformers missing or broken: say so, go on
        log(f"[{name}] skipped: {type(e).__name__}: {e}")
        rows.append({"model": name, "note": f"skipped: {type(e).__name__}: {str(e)[:300]}"})
        return
    path = os.path.join(a.work, f"{name}.onnx")
    try:
        f, secs = export(name, torch, m, example, exporter, path, a.reuse_exports)
        if secs is None:
            log(f"[{name}] reusing {path}")
        else:
            log(f"[{name}] exported ({exporter}) in {secs} s")
        if name == "bert_opt" and secs is not None:
            from onnxruntime.transformers.optimizer import optimize_model
            opt = optimize_model(path, model_type="bert", num_heads=12, hidden_size=768)
            opt.save_model_to_file(path)
            log(f"[{name}] optimized: {opt.get_fused_operator_statistics()}")
    except Exception as e:
        log(f"[{name}] export failed: {type(e).__name__}: {e}")
        rows.append({"model": name, "note": f"export failed: {type(e).__name__}: {str(e)[:300]}"})
        return
    cpu = hdep.cpu_session(ort, path)
    t = time.time()
    try:
        ep = hdep.ep_session(ort, path, dev)
    except Exception as e:
        rows.append({"model": name, "note": f"our EP session failed: {e}"})
        return
    sess_s = round(time.time() - t, 2)
    pl = hdep.placement(ep)
    log(f"[{name}] {hdep.placement_str(pl)}; partitions {pl.get('parts', '?')}; session {sess_s} s")
    ep16, sess16_s, why16, ep16ab = None, None, None, None
    if not a.no_fp16:
        try:
            t = time.time()
            ep16 = hdep.ep_session(ort, path, dev, {"precision": "fp16"})
            sess16_s = round(time.time() - t, 2)
            log(f"[{name}] precision=fp16 session {sess16_s} s")
            if a.ab_env or a.ab_option:
                with hdep.env_set(a.ab_env):
                    ep16ab = hdep.ep_session(ort, path, dev, dict({"precision": "fp16"}, **hdep.options_dict(a.ab_option)))
        except Exception as e:
            why16 = f"precision=fp16 session failed: {str(e)[:300]}"
            log(f"[{name}] {why16}")
    fc = f.cuda()
    for b in ROWS[name]:
        feeds = inputs_for(example, b, np)
        row = {"model": name, "batch": b, "placement": hdep.placement_cell(pl), "parts": pl.get("parts", "?"),
               "session_s": sess_s, "session_fp16_s": sess16_s, "times": {}, "notes": []}
        if why16:
            row["check_fp16"] = {"pass": False, "why": why16}
        ref = cpu.run(None, feeds)
        try:
            t = time.time()
            got = ep.run(None, feeds)
            row["first_run_s"] = round(time.time() - t, 2)
            row["check"] = c = hdep.compare(got[0], ref[0])
            log(f"[{name} b{b}] ours vs CPU EP: {hdep.compare_str(c)} (first run {row['first_run_s']} s)")
            row["times"]["ours_host"] = median_ms(lambda: ep.run(None, feeds), a.iters, 3, lambda: None)
            io, keep = device_io(ort, np, ep, feeds, [r.shape for r in ref])
            ep.run_with_iobinding(io)
            row["times"]["ours_device"] = median_ms(lambda: ep.run_with_iobinding(io), a.iters, 3,
                                                    torch.cuda.synchronize)
            del io, keep
        except Exception as e:
            row["check"] = {"pass": False, "why": f"run failed: {str(e)[:300]}"}
            log(f"[{name} b{b}] ours failed: {e}")
        timers = {}  # the fp16 rows: taking turns with torch's fp16 graph
        io_b = keep_b = None
        if ep16 is not None:
            try:
                io, keep = device_io(ort, np, ep16, feeds, [r.shape for r in ref])
                ep16.run_with_iobinding(io)
                torch.cuda.synchronize()
                got16 = first_output(io, keep, len(feeds))
                row["check_fp16"] = c = hdep.compare(got16, ref[0])
                log(f"[{name} b{b}] ours precision=fp16 vs CPU EP (fp32): {hdep.compare_str(c)}")
                timers["ours_fp16"] = lambda: ep16.run_with_iobinding(io)
                if ep16ab is not None:
                    io_b, keep_b = device_io(ort, np, ep16ab, feeds, [r.shape for r in ref])
                    with hdep.env_set(a.ab_env):  # twice: the second run captures the GPU graph
                        ep16ab.run_with_iobinding(io_b)
                        ep16ab.run_with_iobinding(io_b)
                    torch.cuda.synchronize()
                    row["check_fp16_ab"] = c = hdep.compare(first_output(io_b, keep_b, len(feeds)), ref[0])
                    log(f"[{name} b{b}] ours precision=fp16 with {ab_label(a)} vs CPU EP (fp32): {hdep.compare_str(c)}")
                    timers["ours_fp16_ab"] = lambda: ep16ab.run_with_iobinding(io_b)
            except Exception as e:
                row["check_fp16"] = {"pass": False, "why": f"run failed: {str(e)[:300]}"}
                log(f"[{name} b{b}] ours precision=fp16 failed: {e}")
        for key, dtype, tf32 in (("torch_fp32", None, False), ("torch_tf32", None, True),
                                 ("torch_fp16", torch.float16, False)):
            try:
                graph, y = torch_graph(torch, fc, feeds, dtype, tf32)
                if key == "torch_fp16":  # taking turns with ours_fp16, while its half weights exist
                    timers[key] = graph.replay
                else:
                    row["times"][key] = median_ms(graph.replay, a.iters, 5, torch.cuda.synchronize)
                if key == "torch_fp32":
                    row["torch_check"] = hdep.compare(y.float().cpu().numpy(), ref[0])
            except Exception as e:
                row["notes"].append(f"{key}: {type(e).__name__}: {str(e)[:200]}")
            if key == "torch_fp16":
                time_turns(row, timers, a, torch.cuda.synchronize)
            graph = y = None
            fc = f.cuda().float()
        time_turns(row, timers, a, torch.cuda.synchronize)  # ours alone where torch's fp16 graph failed
        # what the last timed replay of each captured graph left in its outputs
        for k, (i_o, k_o) in (("check_fp16_replay", (io, keep) if "ours_fp16" in row["times"] else (None, None)),
                              ("check_fp16_ab_replay", (io_b, keep_b))):
            if i_o is not None:
                torch.cuda.synchronize()
                row[k] = c = hdep.compare(first_output(i_o, k_o, len(feeds)), ref[0])
                log(f"[{name} b{b}] {k[6:]} vs CPU EP (fp32): {hdep.compare_str(c)}")
        io = keep = io_b = keep_b = None
        check_padded(row, "check_padded", ep, cpu, feeds)
        check_padded(row, "check_fp16_padded", ep16, cpu, feeds)
        log(f"[{name} b{b}] " + ", ".join(f"{k} {v:.3f} ms" for k, v in row["times"].items()))
        rows.append(row)
        torch.cuda.empty_cache()
    del ep, ep16, ep16ab, cpu, fc
    torch.cuda.empty_cache()


def check_cell(c):
    if not c:
        return ""
    return ("PASS" if c.get("pass") else "FAIL") + (f" {c['rel_l2']:.1e}" if "rel_l2" in c else f" ({c.get('why', '')})")


def markdown(rows, meta):
    cols = ["ours_host", "ours_device", "ours_fp16"] + (["ours_fp16_ab"] if meta.get("ab") else []) + [
        "torch_fp32", "torch_tf32", "torch_fp16"]
    out = [f"# Transformers: our EP vs torch ({meta['gpu']}, {meta['date']})", "",
           f"onnxruntime {meta['ort']}, torch {meta['torch']}; median ms of {meta['iters']} runs; ours at the EP's "
           "default precision (fp32, TF32 allowed), and ours_fp16 with provider option precision=fp16 (device "
           "I/O; check fp16 = its rel L2 against the CPU EP's fp32 output); ratio = ours device I/O / torch fp32 "
           "CUDA graph; ratio fp16 = ours_fp16 / torch fp16 CUDA graph. The fp16 columns are timed taking turns, "
           f"{meta.get('rounds', 1)} rounds, each the least of its round medians; check fp16 'replayed': the "
           "output the last timed run (a captured graph's replay) left, against the same CPU EP output."
           + (f" ours_fp16_ab: the same with {meta['ab']} (check fp16 ab)." if meta.get("ab") else ""), "",
           "| model | batch | nodes on EP | partitions | session s | check | check fp16 | " + " | ".join(cols)
           + " | ratio | ratio fp16 |",
           "|---|---|---|---|---|---|---|" + "---|" * (len(cols) + 2)]
    for r in rows:
        if "batch" not in r:
            out.append(f"| {r['model']} | | | | | {r.get('note', '')} | |" + " |" * (len(cols) + 2))
            continue
        t = r["times"]
        cells = [f"{t[k]:.3f}" if k in t else "" for k in cols]
        ratio = f"{t['ours_device'] / t['torch_fp32']:.2f}" if "ours_device" in t and "torch_fp32" in t else ""
        r16 = f"{t['ours_fp16'] / t['torch_fp16']:.2f}" if "ours_fp16" in t and "torch_fp16" in t else ""
        sess = f"{r['session_s']}" + (f" / {r['session_fp16_s']}" if r.get("session_fp16_s") is not None else "")
        chk = check_cell(r.get("check")) + (f" (padded {check_cell(r['check_padded'])})" if "check_padded" in r else "")
        chk16 = check_cell(r.get("check_fp16")) + (
            f" (padded {check_cell(r['check_fp16_padded'])})" if "check_fp16_padded" in r else "") + (
            f"; ab {check_cell(r['check_fp16_ab'])}" if "check_fp16_ab" in r else "") + (
            f"; replayed {check_cell(r['check_fp16_replay'])}" if "check_fp16_replay" in r else "") + (
            f", ab replayed {check_cell(r['check_fp16_ab_replay'])}" if "check_fp16_ab_replay" in r else "")
        out.append(f"| {r['model']} | {r['batch']} | {r['placement']} | {r['parts']} | {sess} | "
                   f"{chk} | {chk16} | " + " | ".join(cells)
                   + f" | {ratio} | {r16} |")
    return "\n".join(out) + "\n"


def ab_label(a):
    """What the second fp16 session changes, for logs and the table; "" if none."""
    parts = ([f"{a.ab_env} as its plans were built"] if a.ab_env else []) + \
        [f"provider option {kv}" for kv in a.ab_option]
    return ", ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*", default=list(ROWS))
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--no-fp16", action="store_true", help="no session of ours with precision=fp16")
    ap.add_argument("--rounds", type=int, default=3,
                    help="rounds in which ours_fp16 (and ours_fp16_ab) and torch_fp16 take turns (each the least "
                         "of its round medians)")
    ap.add_argument("--out", default=os.environ.get("OUT") or "bench-out")
    ap.add_argument("--work", default=os.environ.get("TMPDIR", "/tmp") + "/hipdnn-tx")
    ap.add_argument("--reuse-exports", action="store_true",
                    help="take MODEL.onnx from --work where an earlier run exported it (the weights are seeded, so "
                         "they are the same): A/B runs of two EP libraries skip the export")
    ap.add_argument("--ab-env", metavar="VAR=VALUE",
                    help="a second precision=fp16 session built with VAR=VALUE set, timed alternately with the first")
    ap.add_argument("--ab-option", metavar="KEY=VALUE", action="append", default=[], type=hdep.key_value,
                    help="a provider option of that second session (repeatable; with or without --ab-env)")
    a = ap.parse_args()
    import numpy as np
    import onnxruntime as ort
    import torch
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    hdep.register(ort)
    dev = hdep.gpu_device(ort)
    rows = []
    meta = {"gpu": torch.cuda.get_device_name(0), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "ort": ort.__version__, "torch": torch.__version__, "iters": a.iters, "rounds": a.rounds, "ab": ab_label(a)}
    for name in a.models:
        if name not in ROWS:
            raise SystemExit(f"unknown model {name}; have {', '.join(ROWS)}")
        bench(name, a, ort, torch, np, dev, rows)
        with open(os.path.join(a.out, "transformers.md"), "w") as f:
            f.write(markdown(rows, meta))
        with open(os.path.join(a.out, "transformers.json"), "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    print(markdown(rows, meta))
    return 0 if all(r.get(k, {}).get("pass", True) for r in rows
                    for k in ("check", "check_fp16", "check_fp16_ab", "check_fp16_replay",
                              "check_fp16_ab_replay")) else 1


if __name__ == "__main__":
    sys.exit(main())
