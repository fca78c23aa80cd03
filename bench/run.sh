#!/usr/bin/env bash
# bench/run.sh: benchmarks on the GPU machine (see bench/README.md).
#
#   bash bench/run.sh [extra torchvision model names...]
#
# Exports ResNet-50 and MobileNetV2 (and any torchvision models named) with
# random weights, then times, at batch 1 and 32: ORT + our EP (device and host
# I/O), ORT's CPU EP, torch eager and torch CUDA graph, all in one process,
# and ours with provider option precision=fp16 beside torch's fp16 CUDA
# graph, with a correctness check of ours against the CPU EP, and device memory,
# ours (hipdnn-ep-run's figures, a process per row) beside torch eager's
# (bench/README.md, "Device memory"). Writes
# $OUT/benchmarks.md, $OUT/bench-<date>.json and $OUT/bench.log
# (./bench-out when OUT is unset). Fits in ~8 minutes for the two models.
#
# Knobs: PY (default /opt/torch/.venv/bin/python3), BENCH_BATCHES ("1 32"),
# BENCH_ITERS (50), BENCH_WARMUP (10), BENCH_BUDGET (seconds after which no
# new row starts, default 420), BENCH_TIMEOUT (hard limit, default 560),
# BENCH_NO_FP16 (set: no fp16 columns).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
# shellcheck source=bench/env.sh
. "$root/bench/env.sh"

models=(resnet50 mobilenet_v2 "$@")
# shellcheck disable=SC2206 # word splitting wanted
batches=(${BENCH_BATCHES:-1 32})
echo "bench: $(date -u '+%Y-%m-%d %H:%M UTC') models: ${models[*]} batches: ${batches[*]}"
echo "bench: python $PY; EP $HIPDNN_EP_LIB; LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
nvidia-smi -L 2>&1 | head -4

timeout -k 10 "${BENCH_TIMEOUT:-560}" "$PY" bench/bench.py "${models[@]}" \
  --batches "${batches[@]}" --iters "${BENCH_ITERS:-50}" --warmup "${BENCH_WARMUP:-10}" \
  --budget-s "${BENCH_BUDGET:-420}" --work "${TMPDIR:-/tmp}/hipdnn-bench" --out "$OUT" ${BENCH_NO_FP16:+--no-fp16} \
  2>&1 | tee "$OUT/bench.log"
rc=${PIPESTATUS[0]}
case $rc in
  0) echo "bench: done: every row PASS" ;;
  124|137) echo "bench: TIMED OUT after ${BENCH_TIMEOUT:-560}s: $OUT/benchmarks.md has the rows finished so far" ;;
  *) echo "bench: exit $rc: some row FAILED or our EP did not run (see the notes in $OUT/benchmarks.md)" ;;
esac
ls -la "$OUT"
exit "$rc"
