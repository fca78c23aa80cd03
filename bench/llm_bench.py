"""LLM decode benchmark (GPU machine): a decoder in onnxruntime-genai's layout
(tools/llm/gen_decoder.py) on HipDNNExecutionProvider with device I/O, the way
GenAI drives it (one KV buffer per layer bound as both past_key_values.N and
present.N, the attention mask growing by one per step, greedy tokens picked on
the host), against transformers' LlamaForCausalLM with the same config in fp16,
a static KV cache and the decode step captured in a CUDA graph, in one process.

Prints one table per model: prefill ms (cold: first run at that prompt length,
plan build included; warm: again), ms per decode step, tokens/s, and the
bandwidth figure (weight bytes + KV bytes read per step / step time, against
the GPU's peak; the embedding table, read one row a token, is not counted). Then device
memory after 100 decode steps, every 250 after, and after --mem-steps.

usage: python3 bench/llm_bench.py [--quant none,int4] [--prompts 128,1024]
          [--batches 1,8] [--steps 128] [--mem-steps 1000] [--json FILE]
Torch's weights are its own random initialisation (timing only: the tests
check our answers against the CPU EP; tests/test_decoder.c, bench --check).
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hdep  # noqa: E402

LLAMA_1B = dict(layers=16, hidden=2048, heads=32, kv_heads=8, head_dim=64, mlp=8192, vocab=128256)
# HBM peak by GPU name (GB/s): H100 SXM 3350, H100 PCIe 2000, H200 4800
PEAK_GBS = [("H200", 4800.0), ("H100 PCIe", 2000.0), ("H100", 3350.0)]


def log(*a):
    print(*a, flush=True)


def generate(out_dir, cfg, dtype, quant, max_len):
    if os.path.exists(os.path.join(out_dir, "model.onnx")):
        return
    cmd = [sys.executable, os.environ.get("HIPDNN_EP_GEN_DECODER") or os.path.join(hdep.REPO, "tools", "llm", "gen_decoder.py"), "--out", out_dir,
           "--dtype", dtype, "--quant", quant, "--max-len", str(max_len)]
    for k, v in cfg.items():
        cmd += [f"--{k.replace('_', '-')}", str(v)]
    t = time.time()
    subprocess.run(cmd, check=True)
    log(f"generated {out_dir} in {time.time() - t:.1f} s")


def weight_bytes(path):
    """(bytes stored, bytes a decode step reads) of the model's initializers.
    A table read only by Gather (the token embedding) gives one row a token,
    not its bytes: counting it whole would put the floor ~0.16 ms too high
    for the 1B shape."""
    import onnx
    m = onnx.load(path, load_external_data=False)
    gathered = {n.input[0] for n in m.graph.node if n.op_type == "Gather"}
    other = {i for n in m.graph.node if n.op_type != "Gather" for i in n.input}
    stored = read = 0
    for t in m.graph.initializer:
        n = 1
        for d in t.dims:
            n *= d
        b = n * {1: 4, 10: 2, 16: 2, 2: 1, 3: 1, 6: 4, 7: 8}.get(t.data_type, 4)
        stored += b
        if not (t.name in gathered and t.name not in other):
            read += b
    return stored, read


class Decoder:
    """Our EP's session over one generated model, with GenAI's buffer sharing.

    mask="grow": the attention mask is [B, total], one column wider each step
    (GenAI without graph capture). mask="static": GenAI's graph-capture form,
    which it always uses for AMDGPUExecutionProvider (position_inputs.cpp,
    ShouldUseStaticMaskHandling): one [B, max_length] mask buffer, zeros past
    the tokens so far, updated in place, and input_ids in one fixed buffer:
    every decode step has one input shape."""

    def __init__(self, ort, np, path, dev, cfg, batch, max_len, np_dtype, mask="grow", rebind=False):
        self.ort, self.np, self.cfg, self.batch, self.max_len = ort, np, cfg, batch, max_len
        # static form: one binding a length, made once (GenAI's buffers do not move), unless rebind
        self.rebind = rebind
        self.bound = {}
        self.sess = hdep.ep_session(ort, path, dev)
        self.np_dtype = np_dtype
        self.mask = mask
        self.kv = {}
        shape = [batch, cfg["kv_heads"], max_len, cfg["head_dim"]]
        for i in range(cfg["layers"]):
            for kind in ("key", "value"):
                self.kv[i, kind] = ort.OrtValue.ortvalue_from_numpy(np.zeros(shape, np_dtype), "gpu", 0, hdep.NVIDIA)
        self.logits = {}
        self.ids = {}  # static form: one input_ids buffer per length
        self.static_mask = None
        if mask == "static":
            self.static_mask = ort.OrtValue.ortvalue_from_numpy(np.zeros((batch, max_len), np.int64), "gpu", 0,
                                                                hdep.NVIDIA)

    def _to_device(self, dst, arr):
        """Writes host array arr into device value dst in place (GenAI's static buffers)."""
        src = self.ort.OrtValue.ortvalue_from_numpy(arr)
        if hasattr(self.ort, "copy_tensors"):
            self.ort.copy_tensors([src], [dst], None)
        else:
            dst.update_inplace(arr)

    def run(self, ids, total):
        np, ort = self.np, self.ort
        b, s = ids.shape
        if self.mask == "static" and not self.rebind and s in self.bound:
            self._to_device(self.ids[s], ids)
            m = np.zeros((b, self.max_len), np.int64)
            m[:, :total] = 1
            self._to_device(self.static_mask, m)
            self.sess.run_with_iobinding(self.bound[s])
            return self.logits[s]
        io = self.sess.io_binding()
        if self.mask == "static":
            if s not in self.ids:
                self.ids[s] = ort.OrtValue.ortvalue_from_numpy(ids, "gpu", 0, hdep.NVIDIA)
            ov_ids = self.ids[s]
            self._to_device(ov_ids, ids)
            m = np.zeros((b, self.max_len), np.int64)
            m[:, :total] = 1
            self._to_device(self.static_mask, m)
            ov_mask = self.static_mask
        else:
            ov_ids = ort.OrtValue.ortvalue_from_numpy(ids, "gpu", 0, hdep.NVIDIA)
            ov_mask = ort.OrtValue.ortvalue_from_numpy(np.ones((b, total), np.int64), "gpu", 0, hdep.NVIDIA)
        io.bind_ortvalue_input("input_ids", ov_ids)
        io.bind_ortvalue_input("attention_mask", ov_mask)
        for (i, kind), ov in self.kv.items():
            io.bind_ortvalue_input(f"past_key_values.{i}.{kind}", ov)
            io.bind_ortvalue_output(f"present.{i}.{kind}", ov)
        if s not in self.logits:
            self.logits[s] = ort.OrtValue.ortvalue_from_shape_and_type([b, s, self.cfg["vocab"]], self.np_dtype, "gpu", 0,
                                                                       hdep.NVIDIA)
        io.bind_ortvalue_output("logits", self.logits[s])
        self.sess.run_with_iobinding(io)
        if self.mask == "static":
            self.bound[s] = io
        return self.logits[s]

    def replay_ms(self, n):
        """Static form: n runs of the last decode step back to back (no host sampling between them, so
        the GPU's time a step plus what ORT's Run adds; the step's inputs are the same each time)."""
        io = self.bound.get(1)
        if io is None:  # --rebind
            return float("nan")
        self.sess.run_with_iobinding(io)
        self.logits[1].numpy()
        t = time.perf_counter()
        for _ in range(n):
            self.sess.run_with_iobinding(io)
        self.logits[1].numpy()
        return (time.perf_counter() - t) * 1e3 / n

    def step(self, ids, total):
        """One run and the last token's logits on the host (GenAI samples there)."""
        return self.run(ids, total).numpy()[:, -1, :]

    def generate(self, prompt, steps, times=None, first=None):
        np = self.np
        last = first if first is not None else self.step(prompt, prompt.shape[1])
        toks = []
        total = prompt.shape[1]
        for _ in range(steps):
            tok = np.argmax(last, axis=-1).astype(np.int64).reshape(-1, 1)
            toks.append(tok)
            total += 1
            t = time.perf_counter()
            last = self.step(tok, total)
            if times is not None:
                times.append((time.perf_counter() - t) * 1e3)
        return np.concatenate(toks, axis=1)


PREFILL_RUNS = 5  # prefill times: the median of this many warm runs


def torch_decode(torch, cfg, batch, prompt_len, steps, max_len):
    """(prefill ms warm, decode ms/step, how) for LlamaForCausalLM in fp16."""
    from transformers import LlamaConfig, LlamaForCausalLM
    from transformers.cache_utils import StaticCache
    lc = LlamaConfig(vocab_size=cfg["vocab"], hidden_size=cfg["hidden"], intermediate_size=cfg["mlp"],
                     num_hidden_layers=cfg["layers"], num_attention_heads=cfg["heads"],
                     num_key_value_heads=cfg["kv_heads"], head_dim=cfg["head_dim"], max_position_embeddings=max_len,
                     rope_theta=500000.0, tie_word_embeddings=False, torch_dtype=torch.float16)
    with torch.device("cuda"):
        model = LlamaForCausalLM(lc).to(torch.float16).eval()
    try:
        cache = StaticCache(config=lc, max_batch_size=batch, max_cache_len=max_len, device="cuda", dtype=torch.float16)
    except TypeError:
        cache = StaticCache(config=lc, max_cache_len=max_len)
    ids = torch.randint(0, cfg["vocab"], (batch, prompt_len), device="cuda")
    pos = torch.arange(prompt_len, device="cuda")

    def prefill():
        cache.reset()
        return model(input_ids=ids, past_key_values=cache, cache_position=pos, use_cache=True).logits

    with torch.no_grad():
        prefill()
        torch.cuda.synchronize()
        pre = []
        for _ in range(PREFILL_RUNS):
            t = time.perf_counter()
            prefill()
            torch.cuda.synchronize()
            pre.append((time.perf_counter() - t) * 1e3)
        pre_ms = hdep.median(pre)
        tok = torch.zeros((batch, 1), dtype=torch.long, device="cuda")
        cpos = torch.tensor([prompt_len], device="cuda")

        def step():
            return model(input_ids=tok, past_key_values=cache, cache_position=cpos, use_cache=True).logits

        how = "CUDA graph"
        try:
            g, out = hdep.torch_capture(torch, step)
            run = g.replay
        except Exception as e:  # noqa: BLE001
            how = f"eager ({type(e).__name__}: {str(e)[:80]})"
            out = None
            run = None
        ts = []
        for i in range(steps):
            cpos.fill_(prompt_len + i)
            t = time.perf_counter()
            if run:
                run()
                logits = out
            else:
                logits = step()
            nxt = logits[:, -1, :].argmax(-1, keepdim=True)
            nxt_host = nxt.cpu()  # the host picks the token, as GenAI does
            tok.copy_(nxt_host.to("cuda", non_blocking=True))
            ts.append((time.perf_counter() - t) * 1e3)
    del model, cache
    torch.cuda.empty_cache()
    return pre_ms, hdep.median(ts[3:]), how


def peak_gbs(name):
    for key, gbs in PEAK_GBS:
        if key in name:
            return gbs
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quant", default="none,int4")
    ap.add_argument("--prompts", default="128,1024")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--steps", type=int, default=128)
    ap.add_argument("--mem-steps", type=int, default=1000)
    ap.add_argument("--max-len", type=int, default=2048)
    ap.add_argument("--models", default=os.path.join(os.environ.get("OUT", "/tmp"), "llm-models"))
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--profile-steps", type=int, default=0,
                    help="after each batch, N static-mask decode steps between cudaProfilerStart/Stop (for ncu)")
    ap.add_argument("--profile-prefill", type=int, default=0,
                    help="after each batch, one prefill of N tokens between cudaProfilerStart/Stop (for ncu)")
    ap.add_argument("--replay", type=int, default=200,
                    help="static form: also time this many decode steps back to back (no host sampling; 0: off)")
    ap.add_argument("--rebind", action="store_true",
                    help="static form: bind every tensor again each step (the harness before 2026-11-24 21:30)")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    import numpy as np
    import onnxruntime as ort
    hdep.register(ort)
    dev = hdep.gpu_device(ort)
    torch = None
    gpu = "?"
    if not a.no_torch:
        import torch
        gpu = torch.cuda.get_device_name(0)
    peak = peak_gbs(gpu)
    cfg = LLAMA_1B
    rows = []
    for quant in a.quant.split(","):
        path_dir = os.path.join(a.models, f"llama1b-fp16-{quant}")
        generate(path_dir, cfg, "fp16", quant, a.max_len)
        path = os.path.join(path_dir, "model.onnx")
        wstored, wbytes = weight_bytes(path)
        for batch in [int(x) for x in a.batches.split(",")]:
            # GenAI's static mask comes with graph capture, which it runs at batch 1 only (and
            # GroupQueryAttention takes a prompt after past tokens at batch 1 only, as ORT's does)
            forms = ("grow", "static") if batch == 1 else ("grow",)
            decs = {form: Decoder(ort, np, path, dev, cfg, batch, a.max_len, np.float16, form, a.rebind) for form in forms}
            for p in [int(x) for x in a.prompts.split(",")]:
                prompt = np.random.default_rng(p).integers(0, cfg["vocab"], (batch, p)).astype(np.int64)
                row = {"quant": quant, "batch": batch, "prompt": p, "weight_bytes": wbytes, "weight_bytes_stored": wstored}
                toks = {}
                for form, dec in decs.items():
                    # prefill: the run alone, median of warm runs (logits stay on the device; torch's are not copied either)
                    t = time.perf_counter()
                    dec.run(prompt, p)
                    cold = (time.perf_counter() - t) * 1e3
                    pre = []
                    for _ in range(PREFILL_RUNS):
                        t = time.perf_counter()
                        logits = dec.run(prompt, p)
                        pre.append((time.perf_counter() - t) * 1e3)
                    warm = hdep.median(pre)
                    first = logits.numpy()[:, -1, :]
                    times = []
                    toks[form] = dec.generate(prompt, a.steps, times, first=first)
                    step = hdep.median(times[3:])
                    row[form] = {"prefill_cold_ms": cold, "prefill_ms": warm, "step_ms": step,
                                 "tok_s": batch * 1e3 / step}
                    if form == "static" and a.replay:
                        row[form]["replay_ms"] = dec.replay_ms(a.replay)
                        log(f"[{quant} b{batch} p{p}] static step replayed {a.replay}x back to back: "
                            f"{row[form]['replay_ms']:.3f} ms")
                ctx = p + a.steps / 2
                kv_bytes = 2 * cfg["layers"] * batch * cfg["kv_heads"] * ctx * cfg["head_dim"] * 2
                row["floor_ms"] = (wbytes + kv_bytes) / (peak * 1e9) * 1e3 if peak else None
                best = row["static" if "static" in row else "grow"]["step_ms"]
                row["gbs"] = (wbytes + kv_bytes) / (best * 1e-3) / 1e9
                # both forms decode the same tokens unless two logits tie within rounding
                if "static" in toks:
                    row["tokens_agree"] = float((toks["grow"] == toks["static"]).mean())
                if torch is not None and quant == "none":
                    try:
                        tp, ts, how = torch_decode(torch, cfg, batch, p, a.steps, a.max_len)
                        row.update(torch_prefill_ms=tp, torch_step_ms=ts, torch_how=how, torch_tok_s=batch * 1e3 / ts)
                    except Exception as e:  # noqa: BLE001
                        row["torch_error"] = f"{type(e).__name__}: {str(e)[:200]}"
                log(json.dumps(row))
                rows.append(row)
            if a.mem_steps and batch == 1:
                for form, dec in decs.items():
                    dec.run(np.ones((1, 16), np.int64), 16)
                    tok = np.ones((1, 1), np.int64)
                    mem = {}
                    for i in range(a.mem_steps):
                        dec.run(tok, 16 + (i % (a.max_len - 32)) + 1)
                        if (i + 1 == 100 or (i + 1) % 250 == 0 or i + 1 == a.mem_steps) and torch is not None:
                            mem[i + 1] = torch.cuda.mem_get_info()[0]
                    rows.append({"quant": quant, "mask": form, "mem_free_bytes": mem})
                    log(f"[{quant}, {form} mask] device free memory after decode steps: {mem}")
            if a.profile_prefill:
                # ncu --profile-from-start off: only this prefill (grow form; its second run, plans built)
                import torch as torch_prof
                dec = decs["grow"]
                ids = np.ones((batch, a.profile_prefill), np.int64)
                dec.run(ids, a.profile_prefill)
                torch_prof.cuda.synchronize()
                torch_prof.cuda.cudart().cudaProfilerStart()
                dec.run(ids, a.profile_prefill)
                torch_prof.cuda.synchronize()
                torch_prof.cuda.cudart().cudaProfilerStop()
            if a.profile_steps:
                # ncu --profile-from-start off: only these decode steps (static form)
                import torch as torch_prof
                dec = decs["static"]
                dec.run(np.ones((batch, 64), np.int64), 64)
                tok = np.ones((batch, 1), np.int64)
                dec.run(tok, 65)
                torch_prof.cuda.cudart().cudaProfilerStart()
                for i in range(a.profile_steps):
                    dec.run(tok, 66 + i)
                torch_prof.cuda.synchronize()
                torch_prof.cuda.cudart().cudaProfilerStop()
            del decs
    log("")
    log(f"GPU: {gpu}; peak HBM {peak} GB/s; Llama-3.2-1B shape, fp16 activations; greedy; {a.steps} decode steps")
    log("| weights | batch | prompt | prefill ms: grow / static / torch | ms/step: grow mask | ms/step: static mask | "
        "torch ms/step | tok/s (best form) | ours / torch tok/s: grow, static | tokens agree | GB/s (% peak) | floor ms |")
    log("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "grow" not in r:
            continue
        g, st = r["grow"], r.get("static")
        tor = f"{r['torch_step_ms']:.2f}" if "torch_step_ms" in r else r.get("torch_error", "-")[:40]
        best = st or g

        def ratio(f):
            return f"{f['tok_s'] / r['torch_tok_s']:.2f}" if f and "torch_tok_s" in r else "-"

        pct = f" ({100 * r['gbs'] / peak:.0f}%)" if peak else ""
        log(f"| {'fp16' if r['quant'] == 'none' else r['quant']} | {r['batch']} | {r['prompt']} | "
            f"{g['prefill_ms']:.1f} / {st['prefill_ms'] if st else float('nan'):.1f} / "
            f"{r.get('torch_prefill_ms', float('nan')):.1f} | {g['step_ms']:.2f} | "
            f"{st['step_ms'] if st else float('nan'):.2f} | {tor} | {best['tok_s']:.0f} | {ratio(g)}, {ratio(st)} | "
            f"{r.get('tokens_agree', float('nan')):.2f} | {r['gbs']:.0f}{pct} | {r['floor_ms'] or float('nan'):.2f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"gpu": gpu, "peak_gbs": peak, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
