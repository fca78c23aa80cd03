#!/usr/bin/env bash
# bench/profile.sh: per-kernel profile of one model on the GPU machine, ours
# (graph capture off, so each kernel is seen) and torch eager side by side.
#
#   bash bench/profile.sh [MODEL] [BATCH]      (default mobilenet_v2 32)
#
# Writes $OUT/profile-ours.csv and $OUT/profile-torch.csv (ncu --csv, one
# row per kernel launch and metric) and prints a per-kernel summary of each
# (bench/profile_summary.py). Needs ncu on PATH.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
# shellcheck source=bench/env.sh
. "$root/bench/env.sh"
model=${1:-mobilenet_v2}
batch=${2:-32}
metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active
prof() {
  ncu --clock-control none --metrics "$metrics" --csv "$@"
}
HIPDNN_EP_BENCH_OPTIONS=enable_cuda_graph=0 prof "$PY" bench/kernels.py "$model" "$batch" 2 \
  >"$OUT/profile-ours.csv" 2>"$OUT/profile-ours.err"
prof "$PY" bench/kernels.py --torch "$model" "$batch" 2 >"$OUT/profile-torch.csv" 2>"$OUT/profile-torch.err"
for who in ours torch; do
  echo "== $who: $model batch $batch, per run (2 runs profiled)"
  "$PY" bench/profile_summary.py "$OUT/profile-$who.csv" 2
done
