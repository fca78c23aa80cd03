#!/usr/bin/env python3
"""gen_decoder.py: a random-weight decoder-only LLM in onnxruntime-genai's layout.

Writes OUT/model.onnx (+ OUT/model.onnx.data: every initializer, as the
model builder saves them) and OUT/genai_config.json, in the layout that
onnxruntime-genai's model builder writes for a Llama-style model
(src/python/py/models/builders/base.py, llama.py; facts and sources in
tools/llm/README.md). Needs only numpy and onnx (Debian python3-onnx).

  gen_decoder.py --out DIR [--preset tiny|llama3.2-1b] [--layers N] [--hidden N]
                 [--heads N] [--kv-heads N] [--head-dim N] [--mlp N] [--vocab N]
                 [--max-len N] [--context-length N] [--dtype fp32|fp16]
                 [--quant none|int4] [--zero-points] [--accuracy-level N]
                 [--attention gqa|ms] [--qkv-bias] [--rope-theta X] [--rope-scaling none|llama3]
                 [--rms-eps X] [--seed N] [--reference CASES] [--skip-marker FILE]

--reference B:S:G[,B:S:G...] also decodes greedily in numpy (float64) for
each case (batch B, prompt S, G generated tokens after the prefill) and
writes OUT/reference.bin for tests/test_decoder.c (format: write_reference).
--skip-marker FILE: when numpy or onnx cannot be imported, write the reason
to FILE and exit 0, so a build can go on and the test report SKIP.
"""
import argparse
import json
import math
import os
import struct
import sys

PRESETS = {
    # Runs in well under a second on the CPU EP.
    "tiny": dict(layers=2, hidden=64, heads=4, kv_heads=2, head_dim=16, mlp=128, vocab=256,
                 max_len=128, rope_theta=10000.0, rope_scaling="none"),
    # Llama-3.2-1B's shape (config.json of meta-llama/Llama-3.2-1B).
    "llama3.2-1b": dict(layers=16, hidden=2048, heads=32, kv_heads=8, head_dim=64, mlp=8192,
                        vocab=128256, max_len=2048, context_length=131072, rope_theta=500000.0,
                        rope_scaling="llama3", rms_eps=1e-5),
}

BLOCK = 32  # MatMulNBits block_size: the builder's default (quant_config.py)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--preset", choices=sorted(PRESETS), default="tiny")
    for k in ("layers", "hidden", "heads", "kv_heads", "head_dim", "mlp", "vocab", "max_len",
              "context_length"):
        ap.add_argument("--" + k.replace("_", "-"), type=int, default=None)
    ap.add_argument("--dtype", choices=["fp32", "fp16"], default="fp32")
    ap.add_argument("--quant", choices=["none", "int4"], default="none")
    ap.add_argument("--zero-points", action="store_true",
                    help="int4: asymmetric blocks with uint8 zero points (builder default: symmetric)")
    ap.add_argument("--accuracy-level", type=int, default=None,
                    help="int4: MatMulNBits accuracy_level (builder: 4 for CPU/fp32, 0 for CUDA/fp16)")
    ap.add_argument("--attention", choices=["gqa", "ms"], default="gqa")
    ap.add_argument("--qkv-bias", action="store_true",
                    help="a Q/K/V bias (Qwen-2 style); always on with --attention ms (see README)")
    ap.add_argument("--rope-theta", type=float, default=None)
    ap.add_argument("--rope-scaling", choices=["none", "llama3"], default=None)
    ap.add_argument("--rms-eps", type=float, default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--reference", default="", help="B:S:G[,B:S:G...] numpy greedy decodes")
    ap.add_argument("--skip-marker", default="")
    a = ap.parse_args(argv)
    p = dict(PRESETS[a.preset])
    for k in ("layers", "hidden", "heads", "kv_heads", "head_dim", "mlp", "vocab", "max_len",
              "context_length", "rope_theta", "rope_scaling", "rms_eps"):
        v = getattr(a, k)
        if v is not None:
            p[k] = v
    p.setdefault("context_length", p["max_len"])
    p.setdefault("rms_eps", 1e-5)
    for k, v in p.items():
        setattr(a, k, v)
    if a.heads % a.kv_heads:
        ap.error("--heads must be a multiple of --kv-heads")
    if a.head_dim % 2:
        ap.error("--head-dim must be even (rotary halves)")
    if a.quant == "int4" and (a.hidden % BLOCK or a.mlp % BLOCK or (a.heads * a.head_dim) % BLOCK):
        ap.error(f"int4: hidden, mlp and heads*head_dim must be multiples of {BLOCK}")
    if a.attention == "ms" and a.heads != a.kv_heads:
        # qkv_hidden_sizes [Nq, Nkv, Nkv]: Attention's output is Nkv wide and
        # o_proj (Nq rows) fails shape inference in ONNX Runtime
        ap.error("--attention ms needs --kv-heads equal to --heads")
    if a.attention == "ms":
        # ONNX Runtime's CPU Attention kernel dereferences an absent bias
        # (segfault in 1.29 and 1.30): write the builder's biased form.
        a.qkv_bias = True
    if a.accuracy_level is None:
        a.accuracy_level = 4 if a.dtype == "fp32" else 0
    a.cases = []
    for c in filter(None, a.reference.split(",")):
        b, s, g = (int(x) for x in c.split(":"))
        if s + g > a.max_len:
            ap.error(f"--reference {c}: prompt + generated tokens exceed --max-len {a.max_len}")
        a.cases.append((b, s, g))
    return a


def prompt_tokens(b, s, vocab):
    """The prompt tests/test_decoder.c uses: a fixed formula, not random."""
    return [[(1 + 17 * j + 101 * i) % vocab for j in range(s)] for i in range(b)]


class Graph:
    """Nodes, graph IO and initializers; initializers stream to one external file."""

    def __init__(self, np, onnx, data_path):
        self.np, self.onnx = np, onnx
        self.nodes, self.inits, self.consts = [], [], set()
        self.data_name = os.path.basename(data_path)
        self.data = open(data_path, "wb")
        self.weights = {}  # name -> what the numpy reference reads (when keep)
        self.keep = False

    def init(self, name, arr, ref=None):
        """ref: what the numpy reference reads for this weight (None: arr
        itself, False: nothing); kept only when a reference is asked for."""
        np, onnx = self.np, self.onnx
        arr = np.ascontiguousarray(arr)
        if self.keep and ref is not False:
            self.weights[name] = arr if ref is None else ref
        # page-aligned offsets, so ONNX Runtime may map the weights rather than copy them
        off = self.data.tell()
        pad = (-off) % 4096
        self.data.write(b"\0" * pad)
        off += pad
        raw = arr.tobytes()
        self.data.write(raw)
        t = onnx.TensorProto()
        t.name = name
        t.data_type = onnx.helper.np_dtype_to_tensor_dtype(arr.dtype) if hasattr(
            onnx.helper, "np_dtype_to_tensor_dtype") else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[arr.dtype]
        t.dims.extend(arr.shape)
        t.data_location = onnx.TensorProto.EXTERNAL
        for k, v in (("location", self.data_name), ("offset", str(off)), ("length", str(len(raw)))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.inits.append(t)
        return name

    def const(self, dtype, value):
        """The builder's constants: a Constant node named /model/constant_nodes/<T>/<v>
        whose output is /model/constants/<T>/<v> ([1] = 1-D, 1 = scalar)."""
        np, onnx = self.np, self.onnx
        out = f"/model/constants/{dtype}/{value}"
        if out not in self.consts:
            self.consts.add(out)
            v = json.loads(value)
            arr = np.array(v, dtype={"INT64": np.int64, "INT32": np.int32}[dtype])
            self.nodes.append(onnx.helper.make_node(
                "Constant", [], [out], name=out.replace("constants", "constant_nodes"),
                value=onnx.numpy_helper.from_array(arr, out)))
        return out

    def node(self, op, ins, outs, name, domain="", **attrs):
        self.nodes.append(self.onnx.helper.make_node(op, ins, outs, name=name, domain=domain or None,
                                                     **attrs))
        return outs[0]


def quantize_int4(np, w, zero_points, io_dtype, want_deq):
    """MatMulNBits' layout from a MatMul weight w [K, N] (the form of ONNX
    Runtime's DefaultWeightOnlyQuantizer, which the builder's to_nbits runs):
    B uint8 [N, K/32, 16] (element 2i in the low nibble), scales [N * K/32]
    in the IO dtype, zero points uint8 [N * ceil((K/32)/2)] (block 2j low
    nibble) when asymmetric; symmetric blocks have an implied zero point 8.
    Returns (B, scales, zp or None, dequantized w [K, N] as float64 or None)."""
    k, n = w.shape
    kb = k // BLOCK
    q_all = np.empty((n, kb, BLOCK), np.uint8)
    sc_all = np.empty((n, kb), io_dtype)
    zp_all = np.full((n, kb), 8, np.uint8)
    deq = np.empty((n, k), np.float64) if want_deq else None
    step = 4096  # columns at a time: bounded memory for a 128256-wide lm_head
    for c0 in range(0, n, step):
        blk = w[:, c0:c0 + step].T.astype(np.float32).reshape(-1, kb, BLOCK)
        if zero_points:
            mn = np.minimum(blk.min(axis=2), 0)
            mx = np.maximum(blk.max(axis=2), 0)
            sc = ((mx - mn) / 15.0).astype(io_dtype)
            scf = sc.astype(np.float32)
            safe = np.where(scf == 0, 1, scf)
            zp = np.where(scf == 0, 8, np.clip(np.round(-mn / safe), 0, 15)).astype(np.uint8)
            q = np.clip(np.round(blk / safe[..., None]) + zp[..., None], 0, 15).astype(np.uint8)
            zp_all[c0:c0 + step] = zp
        else:
            idx = np.abs(blk).argmax(axis=2)[..., None]
            amax = np.take_along_axis(blk, idx, axis=2)[..., 0]
            sc = (amax / -8.0).astype(io_dtype)
            scf = sc.astype(np.float32)
            safe = np.where(scf == 0, 1, scf)
            q = (np.clip(np.round(blk / safe[..., None]), -8, 7) + 8).astype(np.uint8)
            zp = np.full(scf.shape, 8, np.uint8)
        q_all[c0:c0 + step] = q
        sc_all[c0:c0 + step] = sc
        if want_deq:
            deq[c0:c0 + step] = ((q.astype(np.float64) - zp[..., None]) *
                                 scf.astype(np.float64)[..., None]).reshape(-1, k)
    packed = (q_all[..., 0::2] | (q_all[..., 1::2] << 4)).astype(np.uint8)
    zpk = None
    if zero_points:
        if kb % 2:
            zp_all = np.concatenate([zp_all, np.zeros((n, 1), np.uint8)], axis=1)
        zpk = (zp_all[:, 0::2] | (zp_all[:, 1::2] << 4)).astype(np.uint8).reshape(-1)
    return packed, sc_all.reshape(-1), zpk, (deq.T if want_deq else None)


def rope_caches(np, a):
    """cos/sin [context_length, head_dim/2] as the builder computes them
    (make_rotary_embedding_caches_from_scratch: float32, t = 0..len-1,
    halves of cat(freqs, freqs)); llama3 scaling per llama.py /
    make_inv_freq_rescaled_with_freq_factors (Llama-3.2: factor 32, low 1,
    high 4, original context 8192)."""
    d = a.head_dim
    inv = (1.0 / (a.rope_theta ** (np.arange(0, d, 2, dtype=np.int64).astype(np.float32) / d))).astype(np.float32)
    if a.rope_scaling == "llama3":
        factor, low, high, old = 32.0, 1.0, 4.0, 8192.0
        wl = 2 * math.pi / inv.astype(np.float64)
        smooth = (old / wl - low) / (high - low)
        mid = (1 - smooth) * inv / factor + smooth * inv
        inv = np.where(wl < old / high, inv, np.where(wl > old / low, inv / factor, mid)).astype(np.float32)
    t = np.arange(a.context_length, dtype=np.int64).astype(np.float32)
    freqs = np.outer(t, inv).astype(np.float32)
    return np.cos(freqs), np.sin(freqs)


def build(np, onnx, a):
    io = np.float16 if a.dtype == "fp16" else np.float32
    io_t = onnx.TensorProto.FLOAT16 if a.dtype == "fp16" else onnx.TensorProto.FLOAT
    rng = np.random.default_rng(a.seed)
    L, H, NH, KVH, D, F, V = a.layers, a.hidden, a.heads, a.kv_heads, a.head_dim, a.mlp, a.vocab
    nq, nkv = NH * D, KVH * D
    os.makedirs(a.out, exist_ok=True)
    g = Graph(np, onnx, os.path.join(a.out, "model.onnx.data"))
    g.keep = bool(a.cases)

    def normal(shape, std):
        return (rng.standard_normal(shape, dtype=np.float32) * np.float32(std)).astype(io)

    def matmul(name, x, k, n):
        """The builder's make_matmul_float (weight <name[1:] with / as .>.weight,
        [K, N]), or the MatMulNBits node ORT's quantizer makes of it."""
        w = normal((k, n), 1.0 / math.sqrt(k))
        wname = name[1:].replace("/", ".") + ".weight"
        out = f"{name}/output_0" if name != "/lm_head/MatMul" else "logits"
        if a.quant == "none":
            g.init(wname, w)
            return g.node("MatMul", [x, wname], [out], name)
        packed, scales, zp, deq = quantize_int4(np, w, a.zero_points, io, g.keep)
        ins = [x, g.init(wname + "_Q4", packed, ref=deq), g.init(wname + "_scales", scales, ref=False)]
        if zp is not None:
            ins.append(g.init(wname + "_zero_points", zp, ref=False))
        return g.node("MatMulNBits", ins, [out], name + "_Q4", domain="com.microsoft",
                      K=k, N=n, bits=4, block_size=BLOCK, accuracy_level=a.accuracy_level)

    def norm_weight(name):
        return g.init(name, (1.0 + 0.1 * rng.standard_normal(H, dtype=np.float32)).astype(io))

    ms = a.attention == "ms"
    # Graph IO (base.py: input_names / input_shapes / output_shapes).
    inputs = [onnx.helper.make_tensor_value_info("input_ids", onnx.TensorProto.INT64, ["batch_size", "sequence_length"]),
              onnx.helper.make_tensor_value_info("attention_mask", onnx.TensorProto.INT64,
                                                 ["batch_size", "total_sequence_length"])]
    outputs = [onnx.helper.make_tensor_value_info("logits", io_t, ["batch_size", "sequence_length", V])]
    if not ms:
        for i in range(L):
            for kv in ("key", "value"):
                inputs.append(onnx.helper.make_tensor_value_info(
                    f"past_key_values.{i}.{kv}", io_t, ["batch_size", KVH, "past_sequence_length", "kv_cache_dim"]))
        for i in range(L):
            for kv in ("key", "value"):
                outputs.append(onnx.helper.make_tensor_value_info(
                    f"present.{i}.{kv}", io_t, ["batch_size", KVH, "total_sequence_length", "kv_cache_dim"]))

    # seqlens_k and total_sequence_length (make_attention_mask_reformatting_for_gqa).
    if not ms:
        m = "/model/attn_mask_reformat/attn_mask_subgraph"
        g.node("ReduceSum", ["attention_mask", g.const("INT64", "[1]")], [f"{m}/ReduceSum/output_0"],
               f"{m}/ReduceSum", keepdims=0)
        g.node("Sub", [f"{m}/ReduceSum/output_0", g.const("INT64", "[1]")], [f"{m}/Sub/output_0"], f"{m}/Sub")
        seqlens_k = g.node("Cast", [f"{m}/Sub/output_0"], [f"{m}/Sub/Cast/output_0"], f"{m}/Sub/Cast",
                           to=onnx.TensorProto.INT32)
        g.node("Shape", ["attention_mask"], [f"{m}/Shape/output_0"], f"{m}/Shape")
        g.node("Gather", [f"{m}/Shape/output_0", g.const("INT64", "1")], [f"{m}/Gather/output_0"],
               f"{m}/Gather", axis=0)
        total_len = g.node("Cast", [f"{m}/Gather/output_0"], [f"{m}/Gather/Cast/output_0"],
                           f"{m}/Gather/Cast", to=onnx.TensorProto.INT32)

    emb = g.init("model.embed_tokens.weight", normal((V, H), 1.0))
    x = g.node("Gather", [emb, "input_ids"], ["/model/embed_tokens/Gather/output_0"], "/model/embed_tokens/Gather")
    if not ms:
        cos, sin = rope_caches(np, a)
        g.init("cos_cache", cos.astype(io))
        g.init("sin_cache", sin.astype(io))
    scale = 1.0 / math.sqrt(D)
    root, skip = x, None
    for i in range(L):
        p = f"/model/layers.{i}"
        if i == 0:
            h = g.node("SimplifiedLayerNormalization", [root, norm_weight(f"model.layers.{i}.input_layernorm.weight")],
                       [f"{p}/input_layernorm/output_0"], f"{p}/input_layernorm/LayerNorm",
                       epsilon=a.rms_eps, axis=-1, stash_type=1)
        else:
            h = g.node("SkipSimplifiedLayerNormalization",
                       [root, skip, norm_weight(f"model.layers.{i}.input_layernorm.weight")],
                       [f"{p}/input_layernorm/output_0", "", "", f"{p}/input_layernorm/output_3"],
                       f"{p}/input_layernorm/SkipLayerNorm", domain="com.microsoft", epsilon=a.rms_eps)
            root = f"{p}/input_layernorm/output_3"
        if ms:
            # make_packed_attention: QKV weights [H, Nq + 2 Nkv] are the op's input.
            wq = normal((H, nq + 2 * nkv), 1.0 / math.sqrt(H))
            wname = g.init(f"model.layers.{i}.attn.qkv_proj.weight", wq)
            bname = g.init(f"model.layers.{i}.attn.qkv_proj.bias", normal(nq + 2 * nkv, 0.5))
            att = g.node("Attention", [h, wname, bname, "", "", "", ""], [f"{p}/attn/Attention/output_0"],
                         f"{p}/attn/Attention", domain="com.microsoft", do_rotary=0, mask_filter_value=-10000.0,
                         num_heads=NH, past_present_share_buffer=0, qkv_hidden_sizes=[nq, nkv, nkv],
                         rotary_embedding_dim=0, scale=scale, unidirectional=0)
        else:
            qkv = matmul(f"{p}/attn/qkv_proj/MatMul", h, H, nq + 2 * nkv)
            if a.qkv_bias:  # make_packed_add: one Add of the packed bias
                b = g.init(f"model.layers.{i}.attn.qkv_proj.Add.bias", normal(nq + 2 * nkv, 0.5))
                qkv = g.node("Add", [qkv, b], [f"{p}/attn/qkv_proj/Add/output_0"], f"{p}/attn/qkv_proj/Add")
            att = g.node("GroupQueryAttention",
                         [qkv, "", "", f"past_key_values.{i}.key", f"past_key_values.{i}.value", seqlens_k,
                          total_len, "cos_cache", "sin_cache", "", "", ""],
                         [f"{p}/attn/GroupQueryAttention/output_0", f"present.{i}.key", f"present.{i}.value"],
                         f"{p}/attn/GroupQueryAttention", domain="com.microsoft", num_heads=NH, kv_num_heads=KVH,
                         scale=scale, local_window_size=-1, softcap=0.0, do_rotary=1, rotary_interleaved=0)
        skip = matmul(f"{p}/attn/o_proj/MatMul", att, nq, H)
        h = g.node("SkipSimplifiedLayerNormalization",
                   [root, skip, norm_weight(f"model.layers.{i}.post_attention_layernorm.weight")],
                   [f"{p}/post_attention_layernorm/output_0", "", "", f"{p}/post_attention_layernorm/output_3"],
                   f"{p}/post_attention_layernorm/SkipLayerNorm", domain="com.microsoft", epsilon=a.rms_eps)
        root = f"{p}/post_attention_layernorm/output_3"
        gate = matmul(f"{p}/mlp/gate_proj/MatMul", h, H, F)
        up = matmul(f"{p}/mlp/up_proj/MatMul", h, H, F)
        sig = g.node("Sigmoid", [gate], [f"{p}/mlp/act_fn/Sigmoid/output_0"], f"{p}/mlp/act_fn/Sigmoid")
        act = g.node("Mul", [gate, sig], [f"{p}/mlp/act_fn/Mul/output_0"], f"{p}/mlp/act_fn/Mul")
        mul = g.node("Mul", [act, up], [f"{p}/mlp/Mul/output_0"], f"{p}/mlp/Mul")
        skip = matmul(f"{p}/mlp/down_proj/MatMul", mul, F, H)
    p = f"/model/layers.{L}"
    h = g.node("SkipSimplifiedLayerNormalization",
               [root, skip, norm_weight(f"model.layers.{L}.final_norm_layernorm.weight")],
               [f"{p}/final_norm_layernorm/output_0"], f"{p}/final_norm_layernorm/SkipLayerNorm",
               domain="com.microsoft", epsilon=a.rms_eps)
    matmul("/lm_head/MatMul", h, H, V)
    g.data.close()

    graph = onnx.helper.make_graph(g.nodes, "main_graph", inputs, outputs, initializer=g.inits)
    model = onnx.helper.make_model(graph, producer_name="onnxruntime-genai",
                                   opset_imports=[onnx.helper.make_opsetid("", 21),
                                                  onnx.helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 10  # base.py: ir.Model(..., ir_version=10)
    with open(os.path.join(a.out, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    return g


def genai_config(a):
    """make_genai_config's keys (base.py), Llama's model.type."""
    ms = a.attention == "ms"
    inputs = {"input_ids": "input_ids", "attention_mask": "attention_mask"}
    outputs = {"logits": "logits"}
    if not ms:
        inputs.update(past_key_names="past_key_values.%d.key", past_value_names="past_key_values.%d.value")
        outputs.update(present_key_names="present.%d.key", present_value_names="present.%d.value")
    return {
        "model": {
            "bos_token_id": 1,
            "context_length": a.context_length,
            "decoder": {
                "session_options": {"log_id": "onnxruntime-genai", "provider_options": []},
                "filename": "model.onnx",
                "head_size": a.head_dim,
                "hidden_size": a.hidden,
                "inputs": inputs,
                "outputs": outputs,
                "num_attention_heads": a.heads,
                "num_hidden_layers": a.layers,
                "num_key_value_heads": a.kv_heads,
            },
            "eos_token_id": 2,
            "pad_token_id": 2,
            "type": "llama",
            "vocab_size": a.vocab,
        },
        "search": {
            "diversity_penalty": 0.0, "do_sample": False, "early_stopping": True, "length_penalty": 1.0,
            "max_length": a.max_len, "min_length": 0, "no_repeat_ngram_size": 0, "num_beams": 1,
            "num_return_sequences": 1,
            # base.py: True exactly when the attention op is GroupQueryAttention (or PagedAttention)
            "past_present_share_buffer": not ms,
            "repetition_penalty": 1.0, "temperature": 1.0, "top_k": 50, "top_p": 1.0,
        },
    }


def reference_forward(np, a, W, ids, cache, pos0):
    """Logits [B, S, V] in float64 for ids [B, S] at positions pos0.., appending
    to cache (per layer [K, V] of [B, KVH, T, D]). GroupQueryAttention's
    semantics: packed Q|K|V, rotary (non-interleaved halves) on Q and K,
    query head h reads KV head h // (heads / kv_heads), causal. The ms form
    (builder's packed Attention: no rotary, unidirectional=0, no mask) sees
    the whole sequence with no cache."""
    ms = a.attention == "ms"
    B, S = ids.shape
    NH, KVH, D = a.heads, a.kv_heads, a.head_dim
    nq, nkv = NH * D, KVH * D

    def rms(x, w):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + a.rms_eps) * w

    def rope(t, pos):  # t [B, heads, S, D]
        c, s = W["cos_cache"][pos][None, None], W["sin_cache"][pos][None, None]
        x1, x2 = t[..., :D // 2], t[..., D // 2:]
        return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)

    x = W["model.embed_tokens.weight"][ids]
    resid, skip = x, None
    pos = np.arange(pos0, pos0 + S)
    for i in range(a.layers):
        if i == 0:
            h = rms(resid, W[f"model.layers.{i}.input_layernorm.weight"])
        else:
            resid = resid + skip
            h = rms(resid, W[f"model.layers.{i}.input_layernorm.weight"])
        if ms:
            qkv = h @ W[f"model.layers.{i}.attn.qkv_proj.weight"] + W[f"model.layers.{i}.attn.qkv_proj.bias"]
        else:
            qkv = h @ W[f"model.layers.{i}.attn.qkv_proj.MatMul.weight"]
            if a.qkv_bias:
                qkv = qkv + W[f"model.layers.{i}.attn.qkv_proj.Add.bias"]
        q = qkv[..., :nq].reshape(B, S, NH, D).transpose(0, 2, 1, 3)
        k = qkv[..., nq:nq + nkv].reshape(B, S, KVH, D).transpose(0, 2, 1, 3)
        v = qkv[..., nq + nkv:].reshape(B, S, KVH, D).transpose(0, 2, 1, 3)
        if not ms:
            q, k = rope(q, pos), rope(k, pos)
            k = np.concatenate([cache[i][0], k], axis=2)
            v = np.concatenate([cache[i][1], v], axis=2)
            cache[i] = (k, v)
        T = k.shape[2]
        rep = NH // KVH
        kk, vv = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
        sc = q @ kk.transpose(0, 1, 3, 2) / math.sqrt(D)
        if not ms:
            allowed = np.arange(T)[None, :] <= (pos[:, None])
            sc = np.where(allowed[None, None], sc, -np.inf)
        sc = sc - sc.max(-1, keepdims=True)
        pr = np.exp(sc)
        pr /= pr.sum(-1, keepdims=True)
        att = (pr @ vv).transpose(0, 2, 1, 3).reshape(B, S, nq)
        o = att @ W[f"model.layers.{i}.attn.o_proj.MatMul.weight"]
        resid = resid + o
        h = rms(resid, W[f"model.layers.{i}.post_attention_layernorm.weight"])
        gt = h @ W[f"model.layers.{i}.mlp.gate_proj.MatMul.weight"]
        up = h @ W[f"model.layers.{i}.mlp.up_proj.MatMul.weight"]
        skip = (gt / (1 + np.exp(-gt)) * up) @ W[f"model.layers.{i}.mlp.down_proj.MatMul.weight"]
    resid = resid + skip
    h = rms(resid, W[f"model.layers.{a.layers}.final_norm_layernorm.weight"])
    return h @ W["lm_head.MatMul.weight"]


def write_reference(np, a, g):
    """OUT/reference.bin, little-endian:
    "HDLLMREF", int32 n_cases; per case int32 B, S, G, V; int64 prompt [B*S];
    int64 tokens [(G+1)*B] (step-major: the prefill's argmax, then one per
    decode step); float32 last-position logits [(G+1)*B*V] (step-major)."""
    W = {}
    for name, w in g.weights.items():
        n = name[:-3] if name.endswith("_Q4") else name
        W[n] = np.asarray(w, dtype=np.float64)
    margins = []
    with open(os.path.join(a.out, "reference.bin"), "wb") as f:
        f.write(b"HDLLMREF" + struct.pack("<i", len(a.cases)))
        for (B, S, G) in a.cases:
            f.write(struct.pack("<4i", B, S, G, a.vocab))
            ids = np.array(prompt_tokens(B, S, a.vocab), dtype=np.int64)
            f.write(ids.astype("<i8").tobytes())
            cache = [(np.zeros((B, a.kv_heads, 0, a.head_dim)),) * 2 for _ in range(a.layers)]
            toks, logs = [], []
            seq, pos, cur = ids, 0, ids
            for step in range(G + 1):
                if a.attention == "ms":
                    lg = reference_forward(np, a, W, seq, None, 0)[:, -1]
                else:
                    lg = reference_forward(np, a, W, cur, cache, pos)[:, -1]
                    pos += cur.shape[1]
                t = lg.argmax(-1)
                srt = np.sort(lg, axis=-1)
                margins.append(((srt[:, -1] - srt[:, -2]) / (srt[:, -1] - srt[:, 0])).min())
                toks.append(t)
                logs.append(lg)
                cur = t[:, None].astype(np.int64)
                seq = np.concatenate([seq, cur], axis=1)
            f.write(np.stack(toks).astype("<i8").tobytes())
            f.write(np.stack(logs).astype("<f4").tobytes())
    m = np.array(margins)
    print(f"gen_decoder: reference: {len(a.cases)} case(s), top-1 margin / logit range: "
          f"min {m.min():.3g}, median {np.median(m):.3g}", flush=True)


def main(argv):
    a = parse_args(argv)
    try:
        import numpy as np
        import onnx
        import onnx.helper
        import onnx.numpy_helper
    except Exception as e:  # a build goes on; tests/test_decoder.c reports SKIP with this reason
        reason = f"python3 at {sys.executable} cannot import numpy/onnx ({e}): install python3-onnx"
        if not a.skip_marker:
            print(f"gen_decoder: {reason}", file=sys.stderr)
            return 1
        os.makedirs(os.path.dirname(os.path.abspath(a.skip_marker)), exist_ok=True)
        with open(a.skip_marker, "w") as f:
            f.write(reason + "\n")
        print(f"gen_decoder: SKIP: {reason}")
        return 0
    if a.skip_marker and os.path.exists(a.skip_marker):
        os.remove(a.skip_marker)
    g = build(np, onnx, a)
    with open(os.path.join(a.out, "genai_config.json"), "w") as f:
        json.dump(genai_config(a), f, indent=4)
    size = os.path.getsize(os.path.join(a.out, "model.onnx.data"))
    print(f"gen_decoder: {a.out}/model.onnx: {a.layers} layers, hidden {a.hidden}, heads {a.heads}/{a.kv_heads}, "
          f"head {a.head_dim}, mlp {a.mlp}, vocab {a.vocab}, {a.dtype}, quant {a.quant}"
          f"{' (zero points)' if a.zero_points else ''}, attention {a.attention}"
          f"{' + QKV bias' if a.qkv_bias else ''}; weights {size / 1e6:.1f} MB")
    if a.cases:
        write_reference(np, a, g)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
