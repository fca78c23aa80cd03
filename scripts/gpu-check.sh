#!/usr/bin/env bash
# gpu-check.sh: proves the EP on the GPU machine (issue 3), over a build made
# on the development machine and carried over (scripts/carry.sh prepares it).
#
#   bash scripts/gpu-check.sh            (in the repository root)
#
# Steps (each time-limited; a failure never stops the next step):
#   a  environment: GPU, driver, libraries, runtimes (no GPU: stop here)
#   b  the test programs with the GPU backend, ORT 1.29 and 1.30
#   c  hipdnn-ep-run on its built-in model: all Conv on our EP, PASS, on the GPU
#   d  ONNX node-test conformance with the GPU backend
#   e  ResNet-50 (torchvision, random weights) through ORT's Python API: our
#      EP vs the CPU EP at batch 1 and 8, and node placement
#   f  leak check: 1,000 runs in one session, host RSS and device memory
#   g  compute-sanitizer memcheck over the GPU op tests (filtered subsets of
#      test_conv, test_ops and test_backend_cuda, with the GPU backend)
#   h  concurrency: one ResNet-50 session from 8 threads x 40 runs, same and
#      mixed batches, CUDA graphs on and off, every output against the run
#      alone; throughput 1 / 4 / 8 threads (bench/ep_threads.py)
#   i  out of memory: gpu_mem_limit too small for a batch: a clear error
#      naming the limit, then batch 1 right in the same session
#   j  fuzz: mutated node-test models through our EP on the GPU: no crash,
#      no hang, no answer that differs from the CPU EP's
#   k  conformance in TF32 mode (the EP's default) over the cases step d
#      claimed, judged by the TF32 tolerance (step d is strict: use_tf32=0)
# Order of execution: a c b h i e f d k j g (most important first, slowest
# last). GPU_CHECK_STEPS="c b h" runs only those (a always runs), so the
# suite can be split over several calls of a limited length.
#
# Results go to $OUT (./gpu-check-out when unset): gpu-check.log (everything),
# summary.txt, tests.json, conformance-gpu.json, ep-model.json, ep-leak.json,
# sanitizer.log. The summary table is printed last. Exit status 1 if any step
# failed or was cut for time.
#
# Environment knobs: PY (python with onnxruntime/torch; default
# /opt/torch/.venv/bin/python3), GPU_CHECK_BUDGET (seconds, default 540),
# GPU_CHECK_CF_FILTER (conformance --filter regex), GPU_CHECK_CF_JOBS (12),
# GPU_CHECK_SAN_CONV_FILTER (test_conv --filter for memcheck, default k3),
# GPU_CHECK_SAN_OPS_FILTER (test_ops --filter, default dynamic_batch),
# GPU_CHECK_SAN_BACKEND_FILTER (test_backend_cuda filter, default 2d_bias_relu),
# GPU_CHECK_STEPS (step letters to run; default all), GPU_CHECK_FUZZ (mutants,
# default 1500), GPU_CHECK_LEAK_RUNS (default 10000).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2

OUT=${OUT:-$root/gpu-check-out}
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
BUDGET=${GPU_CHECK_BUDGET:-540}
START=$(date +%s)
BUILD=$root/build
BIN=$BUILD/bin
export HIPDNN_EP_LIB=$BUILD/lib/libhipdnn_ep.so
export PATH="$PATH:/usr/local/cuda/bin"
export PYTHONUNBUFFERED=1

PY=${PY:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3 || echo python3)

# ---- step bookkeeping ---------------------------------------------------------
S_ID=(); S_TITLE=(); S_STATUS=(); S_INFO=(); S_SECS=()
STEPS=${GPU_CHECK_STEPS:-}
STEP_LOG=/dev/null
STEP_T=0
STEP_INFO=""

now() { date +%s; }
elapsed() { echo $(( $(now) - START )); }

# run_logged CMD...: runs CMD with its output to the console and the step log.
run_logged() {
  "$@" 2>&1 | tee -a "$STEP_LOG"
  return "${PIPESTATUS[0]}"
}

# tlimit SECONDS CMD...: timeout that also kills what CMD started.
tlimit() { local t=$1; shift; timeout -k 10 "$t" "$@"; }

write_summary() {
  {
    printf '%-3s %-48s %-6s %6s  %s\n' step check status secs "key numbers"
    printf '%-3s %-48s %-6s %6s  %s\n' --- ------------------------------------------------ ------ ------ -----------
    local i
    for i in "${!S_ID[@]}"; do
      printf '%-3s %-48s %-6s %6s  %s\n' "${S_ID[$i]}" "${S_TITLE[$i]}" "${S_STATUS[$i]}" "${S_SECS[$i]}" "${S_INFO[$i]}"
    done
  } >"$OUT/summary.txt"
  # the combined log: every step's log in order of execution
  cat "$WORK"/log-*.txt >"$OUT/gpu-check.log" 2>/dev/null
}

record() { # id title status info secs
  S_ID+=("$1"); S_TITLE+=("$2"); S_STATUS+=("$3"); S_INFO+=("$4"); S_SECS+=("$5")
  write_summary
}

# step ID TITLE MAX_SECONDS RESERVE_SECONDS FUNCTION
#   FUNCTION returns 0 for PASS; it may set STEP_INFO; STEP_T is its time limit
#   (at most MAX_SECONDS, and leaving RESERVE_SECONDS for the steps after it).
NSTEP=0
step() {
  local id=$1 title=$2 max=$3 reserve=$4 fn=$5
  if [ -n "$STEPS" ] && [ "$id" != a ] && [[ " $STEPS " != *" $id "* ]]; then return; fi
  reserve=$(( reserve * BUDGET / 540 ))  # the reserves are set for the default budget
  local left=$(( START + BUDGET - $(now) - reserve ))
  STEP_T=$max
  (( left < STEP_T )) && STEP_T=$left
  NSTEP=$((NSTEP + 1))
  STEP_LOG=$WORK/log-$(printf '%02d' $NSTEP)-$id.txt
  : >"$STEP_LOG"
  if (( STEP_T < 15 )); then
    echo "==== [$id] $title: SKIPPED, out of time (budget ${BUDGET}s, $(elapsed)s used)" | tee -a "$STEP_LOG"
    record "$id" "$title" CUT "not run: time budget spent" 0
    return
  fi
  echo | tee -a "$STEP_LOG"
  echo "==== [$id] $title (limit ${STEP_T}s, $(elapsed)s into the run) ====" | tee -a "$STEP_LOG"
  STEP_INFO=""
  local t0; t0=$(now)
  "$fn"
  local rc=$?
  local secs=$(( $(now) - t0 ))
  local st=PASS
  (( rc != 0 )) && st=FAIL
  (( rc == 124 || rc == 137 )) && { st=FAIL; STEP_INFO="TIMED OUT after ${STEP_T}s; $STEP_INFO"; }
  echo "==== [$id] $st in ${secs}s: $STEP_INFO" | tee -a "$STEP_LOG"
  record "$id" "$title" "$st" "$STEP_INFO" "$secs"
}

# ---- locate things ----------------------------------------------------------------
SITE=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null || echo "")
CUDNN_LIB=""; CU13_LIB=""
for d in "$SITE/nvidia/cudnn/lib" /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib; do
  [ -e "$d/libcudnn.so.9" ] && { CUDNN_LIB=$d; break; }
done
for d in "$SITE/nvidia/cu13/lib" /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib; do
  [ -d "$d" ] && { CU13_LIB=$d; break; }
done
# Host libraries carried over (libprotobuf-c for the conformance runner) go
# last, so the machine's own copy wins.
ldp=""
for d in "$CUDNN_LIB" "$CU13_LIB" ${LD_LIBRARY_PATH:+"$LD_LIBRARY_PATH"} "$root/.carry/lib"; do
  [ -n "$d" ] && ldp="${ldp:+$ldp:}$d"
done
export LD_LIBRARY_PATH=$ldp
ORT129=$root/third_party/ort-1.29/lib/libonnxruntime.so
[ -f "$ORT129" ] || ORT129=""
ORT130=$("$PY" - <<'EOF' 2>/dev/null
import glob, os
try:
    import onnxruntime
    pkg = os.path.dirname(onnxruntime.__file__)
    libs = sorted((p for p in glob.glob(os.path.join(pkg, "capi", "libonnxruntime.so*")) if os.path.isfile(p)), key=len)
    if not libs:  # anywhere else in the package (or a *.libs folder beside it)
        libs = sorted((p for p in glob.glob(os.path.join(pkg, "**", "libonnxruntime.so*"), recursive=True)
                       + glob.glob(os.path.join(os.path.dirname(pkg), "onnxruntime*.libs", "libonnxruntime*.so*"))
                       if os.path.isfile(p)), key=len)
    print(libs[0] if libs else "")
except Exception:
    print("")
EOF
)
# The runtime for the single-runtime steps (c, d, g): 1.30 (the machine's own), else 1.29.
ORT_MAIN=${ORT130:-$ORT129}

# ---- a: environment -------------------------------------------------------------
step_env() {
  local ok=0
  if ! command -v nvidia-smi >/dev/null; then
    echo "nvidia-smi not found"; STEP_INFO="no nvidia-smi"; return 1
  fi
  run_logged tlimit 20 nvidia-smi -L || ok=1
  local q
  q=$(tlimit 20 nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1 | head -1)
  echo "GPU: $q" | tee -a "$STEP_LOG"
  [ -n "$q" ] && [[ "$q" != *"failed"* ]] && [[ "$q" != *"No devices"* ]] || ok=1
  GPU_DESC=$q
  {
    echo "repo: $root  (OUT=$OUT, work dir $WORK)"
    echo "python: $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])' 2>&1))"
    "$PY" -c 'import onnxruntime as o; print("onnxruntime", o.__version__, o.__file__)' 2>&1
    "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())' 2>&1
    "$PY" -c 'import onnx; print("onnx", onnx.__version__)' 2>&1
    echo "cuDNN libs: ${CUDNN_LIB:-NOT FOUND}"
    echo "CUDA 13 libs: ${CU13_LIB:-NOT FOUND}"
    echo "ORT 1.29 lib: ${ORT129:-NOT FOUND (third_party/ort-1.29/lib not carried?)}"
    echo "ORT 1.30 lib: ${ORT130:-NOT FOUND in the onnxruntime package}"
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    echo "compute-sanitizer: $(command -v compute-sanitizer || echo NOT FOUND)"
    echo "glibc: $(ldd --version 2>&1 | head -1)"
    echo "carried build:"; ls -la "$BUILD/lib" "$BIN" 2>&1
    [ -f "$root/.carry/ctest.json" ] && echo "test list: .carry/ctest.json" || echo "test list: none (.carry not carried): step b uses build/bin/test_*"
  } 2>&1 | tee -a "$STEP_LOG"
  local f missing=""
  for f in "$BIN"/* "$BUILD"/lib/*.so; do
    [ -f "$f" ] || continue
    case "$f" in *_hip.so|*_hip) continue ;; esac  # the AMD module: no HIP runtime here, by design
    if ldd "$f" 2>/dev/null | grep -q "not found"; then
      missing+=" $(basename "$f"): $(ldd "$f" | awk '/not found/{print $1}' | tr '\n' ' ')"
    fi
  done
  [ -n "$missing" ] && echo "MISSING shared libraries:$missing" | tee -a "$STEP_LOG"
  [ -f "$HIPDNN_EP_LIB" ] || { echo "no $HIPDNN_EP_LIB: carry build/lib"; ok=1; }
  [ -f "$BUILD/lib/libhipdnn_ep_cuda.so" ] || { echo "no libhipdnn_ep_cuda.so next to the EP: the GPU backend cannot load"; ok=1; }
  [ -n "$CUDNN_LIB" ] || ok=1
  [ -n "$ORT_MAIN" ] || ok=1
  STEP_INFO="${q:-no GPU}; ORT 1.30 lib: $([ -n "$ORT130" ] && echo found || echo MISSING); cuDNN dir: $([ -n "$CUDNN_LIB" ] && echo found || echo MISSING)${missing:+; missing libs:$missing}"
  return $ok
}

# ---- b: test programs ---------------------------------------------------------------
step_tests() {
  run_logged tlimit "$STEP_T" "$PY" scripts/gpu_check_tests.py --root "$root" \
    --ort129 "$ORT129" --ort130 "$ORT130" --jobs 8 --timeout 120 --skips-fail \
    --require-pass '^(conv_ort|backend_cuda|gpu_kernels|stress_ort|ops_ort|genai_contract|seed_readme)' --json "$OUT/tests.json"
  local rc=$?
  STEP_INFO=$(grep -E '^tests: ' "$STEP_LOG" | tail -1)
  return $rc
}

# ---- c: hipdnn-ep-run default --------------------------------------------------------
step_run() {
  local rc=0 v lib ran=0
  for v in 130 129; do
    lib=$ORT130; [ $v = 129 ] && lib=$ORT129
    if [ -z "$lib" ]; then
      echo "ORT 1.$((v - 100)): no library here, skipped" | tee -a "$STEP_LOG"
      STEP_INFO+="1.$((v - 100)): no library; "
      continue
    fi
    ran=$((ran + 1))
    echo "--- ORT 1.$((v - 100)): $lib" | tee -a "$STEP_LOG"
    HIPDNN_EP_ORT_LIB=$lib run_logged tlimit $(( STEP_T / 2 )) "$BIN/hipdnn-ep-run" --iters 50 --batch 2 \
      --json "$WORK/run-$v.json"
    local r=$?
    local verdict
    verdict=$("$PY" - "$WORK/run-$v.json" <<'EOF'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"FAIL no report ({e})"); sys.exit(1)
rows = j.get("assignment", [])
total = sum(r["count"] for r in rows)
on = sum(r["count"] for r in rows if r["ep"] == "HipDNNExecutionProvider")
ok = j.get("backend") not in (None, "", "ref") and total > 0 and on == total and (j.get("compare") or {}).get("pass")
lat = (j.get("latency") or {}).get("ep") or {}
print(f"{'PASS' if ok else 'FAIL'} backend={j.get('backend')} {on}/{total} nodes on our EP "
      f"compare={'PASS' if (j.get('compare') or {}).get('pass') else 'FAIL'} median={lat.get('median_ms')} ms")
sys.exit(0 if ok else 1)
EOF
)
    local vr=$?
    echo "verdict ORT 1.$((v - 100)): $verdict (exit $r)" | tee -a "$STEP_LOG"
    STEP_INFO+="1.$((v - 100)): $verdict; "
    (( r != 0 || vr != 0 )) && rc=1
    (( r == 124 || r == 137 )) && rc=124
  done
  (( ran == 0 )) && rc=1
  return $rc
}

# ---- d: conformance -------------------------------------------------------------------
# Run in four slices by case name (a timed-out slice loses only its own
# results: the runner writes its JSON at the end), then merged into one report.
step_conformance() {
  local cases; cases=$(find_cases)
  if [ ! -d "$cases" ]; then STEP_INFO="no ONNX node tests folder found"; return 1; fi
  local ncases
  ncases=$(find "$cases" -mindepth 1 -maxdepth 1 -type d | wc -l)
  echo "cases: $cases ($ncases folders); runtime $ORT_MAIN" | tee -a "$STEP_LOG"
  local -a slices=('^test_[a-b]' '^test_[c-f]' '^test_[g-q]' '^test_[^a-q]')
  [ -n "${GPU_CHECK_CF_FILTER:-}" ] && { slices=("$GPU_CHECK_CF_FILTER"); ncases=0; }  # 0: no count check
  local rc=0 i=0 t_end=$(( $(now) + STEP_T - 5 )) share sl r
  for sl in "${slices[@]}"; do
    share=$(( (t_end - $(now)) / (${#slices[@]} - i) ))
    i=$((i + 1))
    if (( share < 10 )); then echo "slice $sl: no time left" | tee -a "$STEP_LOG"; rc=124; continue; fi
    echo "--- slice $i/${#slices[@]}: --filter '$sl' (limit ${share}s)" | tee -a "$STEP_LOG"
    HIPDNN_EP_ORT_LIB=$ORT_MAIN run_logged tlimit "$share" "$BIN/hipdnn-ep-conformance" --cases "$cases" \
      --backend auto --tf32 0 --jobs "${GPU_CHECK_CF_JOBS:-12}" --timeout 60 --filter "$sl" --no-table \
      --json "$WORK/cf-$i.json"
    r=$?
    (( r == 124 || r == 137 )) && rc=124
    (( r != 0 && rc == 0 )) && rc=$r
  done
  local v vr
  v=$("$PY" - "$OUT/conformance-gpu.json" "$ncases" "$WORK"/cf-*.json <<'EOF'
import json, sys
out, ncases, parts = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
merged, counts, cases, wall, missing = None, {}, [], 0.0, []
for p in parts:
    try:
        j = json.load(open(p))
    except Exception as e:
        missing.append(f"{p}: {e}")
        continue
    merged = merged or j
    for k, v in (j.get("counts") or {}).items():
        counts[k] = counts.get(k, 0) + v
    cases += j.get("cases") if isinstance(j.get("cases"), list) else []
    wall += float(j.get("wall_s") or 0)
if merged is None:
    print("no JSON report from any slice"); sys.exit(1)
merged.update(counts=counts, cases=cases, wall_s=round(wall, 1), filter="")
json.dump(merged, open(out, "w"), indent=1)
devs = sorted({str(c.get("device")) for c in cases if c.get("device") not in (None, "")})
gpu = [d for d in devs if d not in ("ref", "cpu")]
print(f"device={','.join(devs) or '?'} " + " ".join(f"{k}={v}" for k, v in counts.items())
      + f" cases={len(cases)}/{ncases} wall={wall:.0f}s" + (f" MISSING SLICES: {len(missing)}" if missing else ""))
sys.exit(3 if not gpu else (2 if missing or (ncases and len(cases) != ncases) else 0))
EOF
)
  vr=$?
  STEP_INFO="$v"
  (( vr == 3 )) && { STEP_INFO+=" (NOT ON THE GPU)"; return 1; }
  (( rc != 0 )) && return $rc
  (( vr != 0 )) && return 1
  return 0
}

# ---- e: ResNet-50 via Python ----------------------------------------------------------------
step_model() {
  run_logged tlimit "$STEP_T" "$PY" bench/ep_check.py model --work "$WORK/models" --model resnet50 \
    --batches 1 8 --json "$OUT/ep-model.json"
  local rc=$?
  STEP_INFO="$(grep -E '^placement: ' "$STEP_LOG" | tail -1 | cut -c1-160); $(grep -E '^  batch [0-9]+: ' "$STEP_LOG" | sed -E 's/^  batch ([0-9]+): [^:]+: (PASS|FAIL) rel_l2=([^ ]+).*max_abs=([^ ]+).*/b\1 \2 relL2=\3 maxabs=\4/' | tr '\n' ' ')"
  return $rc
}

# ---- f: leak check ------------------------------------------------------------------------
step_leak() {
  local model=$WORK/models/resnet50.onnx
  [ -f "$model" ] || model=""
  run_logged tlimit "$STEP_T" "$PY" bench/ep_check.py leak ${model:+--model "$model"} --work "$WORK" \
    --runs "${GPU_CHECK_LEAK_RUNS:-10000}" --threads 8 --batches 1 2 3 4 --json "$OUT/ep-leak.json"
  local rc=$?
  STEP_INFO="$(grep -E '^(host RSS|device  ) ' "$STEP_LOG" | sed -E 's/, (nvml|nvidia-smi|unavailable).*$/)/' | tr '\n' ';' | tr -s ' ')"
  return $rc
}

# ---- h: concurrency -------------------------------------------------------------------------
step_threads() {
  run_logged tlimit "$STEP_T" "$PY" bench/ep_threads.py --work "$WORK/models" --threads 8 --iters 40 \
    --timeout 90 --json "$OUT/ep-threads.json"
  local rc=$?
  STEP_INFO="$(grep -E '^(defaults|use_tf32|enable_cuda_graph)' "$STEP_LOG" | awk '{printf "%s %s: %s wrong %s err; ", $1, $2, $3, $4}')$(grep -E '^throughput' "$STEP_LOG" | cut -c1-200)"
  return $rc
}

# ---- i: out of memory -----------------------------------------------------------------------
step_oom() {
  run_logged tlimit "$STEP_T" "$PY" bench/ep_check.py oom --work "$WORK/models" --limit-mb 600 --big 256 \
    --json "$OUT/ep-oom.json"
  local rc=$?
  STEP_INFO="$(grep -E '^(PASS|FAIL)' "$STEP_LOG" | tail -1 | cut -c1-200)"
  return $rc
}

# The node tests' folder (the onnx package's, the carried copy, or shared/).
find_cases() {
  local cases
  cases=$("$PY" -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node"))' 2>/dev/null)
  if [ ! -d "$cases" ] && [ -d "$WORK/node-tests/node" ]; then cases=$WORK/node-tests/node; fi
  if [ ! -d "$cases" ] && [ -f "$root/.carry/node-tests.tar.xz" ]; then
    mkdir -p "$WORK/node-tests" && tar -C "$WORK/node-tests" -xJf "$root/.carry/node-tests.tar.xz" &&
      cases=$WORK/node-tests/node
  fi
  if [ ! -d "$cases" ] && [ -d "$root/../shared/onnx-node-tests/node" ]; then
    cases=$root/../shared/onnx-node-tests/node
  fi
  echo "$cases"
}

# ---- j: fuzz ----------------------------------------------------------------------------------
FUZZ_OPS='conv|pool|relu|gemm|matmul|softmax|reduce_mean|concat|_add|_sub|_mul|_div|batchnorm|flatten|reshape|squeeze|sigmoid|tanh|clip|leakyrelu|hardsigmoid|hardswish|identity|dropout'
step_fuzz() {
  local cases; cases=$(find_cases)
  [ -d "$cases" ] || { STEP_INFO="no ONNX node tests folder found"; return 1; }
  HIPDNN_EP_ORT_LIB=$ORT_MAIN run_logged tlimit "$STEP_T" "$BIN/hipdnn-ep-conformance" --cases "$cases" \
    --backend auto --fuzz "${GPU_CHECK_FUZZ:-1500}" --seed 3 --jobs "${GPU_CHECK_CF_JOBS:-12}" --timeout 60 \
    --filter "$FUZZ_OPS" --json "$OUT/fuzz-gpu.json"
  local rc=$?
  STEP_INFO="$(grep -E '^  (clean|ran|crashes)' "$STEP_LOG" | tr -s ' ' | tr '\n' ';' | cut -c1-400)"
  return $rc
}

# ---- k: conformance, TF32 mode ---------------------------------------------------------------
step_tf32() {
  local cases; cases=$(find_cases)
  [ -f "$OUT/conformance-gpu.json" ] || { STEP_INFO="no strict run (step d) to take the claimed cases from"; return 1; }
  local re
  re=$("$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); n=[c["name"] for c in j["cases"] if c.get("status") in ("pass","fail","crash","timeout")]; print("^(" + "|".join(n) + ")$" if n else "^$")' "$OUT/conformance-gpu.json")
  HIPDNN_EP_ORT_LIB=$ORT_MAIN run_logged tlimit "$STEP_T" "$BIN/hipdnn-ep-conformance" --cases "$cases" \
    --backend auto --tf32 1 --jobs "${GPU_CHECK_CF_JOBS:-12}" --timeout 60 --filter "$re" --no-table \
    --json "$OUT/conformance-gpu-tf32.json"
  local rc=$?
  STEP_INFO="TF32 mode: $(tail -1 "$STEP_LOG")"
  return $rc
}

# ---- g: compute-sanitizer -------------------------------------------------------------------
step_sanitizer() {
  local cs
  cs=$(command -v compute-sanitizer || true)
  [ -z "$cs" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && cs=/usr/local/cuda/bin/compute-sanitizer
  if [ -z "$cs" ]; then STEP_INFO="compute-sanitizer not found"; return 1; fi
  local rc=0 log=$OUT/sanitizer.log t_end=$(( $(now) + STEP_T - 5 )) left=0 half
  : >"$log"
  local -a runs=(
    "test_conv|$BIN/test_conv --filter ${GPU_CHECK_SAN_CONV_FILTER:-k3}"
    "test_ops|$BIN/test_ops --filter ${GPU_CHECK_SAN_OPS_FILTER:-dynamic_batch}"
    "test_backend_cuda|$BIN/test_backend_cuda ${GPU_CHECK_SAN_BACKEND_FILTER:-2d_bias_relu}"
  )
  local item name cmd i=0
  for item in "${runs[@]}"; do
    name=${item%%|*}; cmd=${item#*|}
    left=$(( ${#runs[@]} - i )); i=$((i + 1))
    half=$(( (t_end - $(now)) / left ))   # this run's share of what is left
    (( half < 10 )) && { STEP_INFO+="$name: no time left; "; rc=1; continue; }
    if [ ! -x "${cmd%% *}" ]; then echo "$name: not built, skipped" | tee -a "$STEP_LOG"; STEP_INFO+="$name: not built; "; continue; fi
    echo "--- memcheck $cmd (limit ${half}s)" | tee -a "$STEP_LOG" "$log" >/dev/null
    echo "--- memcheck $cmd (limit ${half}s)"
    # shellcheck disable=SC2086 # $cmd is split on purpose
    HIPDNN_EP_TEST_BACKEND=auto HIPDNN_EP_ORT_LIB=$ORT_MAIN tlimit "$half" "$cs" --tool memcheck \
      --error-exitcode 86 $cmd >"$WORK/san-$name.txt" 2>&1
    local r=$?
    head -c 4000000 "$WORK/san-$name.txt" >>"$log"
    tail -n 25 "$WORK/san-$name.txt" | tee -a "$STEP_LOG"
    local es
    es=$(grep -E 'ERROR SUMMARY' "$WORK/san-$name.txt" | tail -1 | sed 's/^=* *//')
    echo "$name: exit $r; ${es:-no ERROR SUMMARY line}" | tee -a "$STEP_LOG"
    STEP_INFO+="$name: ${es:-no summary} (exit $r); "
    if (( r == 124 || r == 137 )); then STEP_INFO+="$name TIMED OUT; "; rc=1
    elif (( r != 0 )) || [[ "$es" != *"ERROR SUMMARY: 0 errors"* ]]; then rc=1
    fi
  done
  return $rc
}

echo "gpu-check: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), budget ${BUDGET}s, results in $OUT"
step a "environment (GPU, driver, libraries)"          30  400 step_env
if [ "${S_STATUS[0]}" != PASS ] && ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no GPU: stopping after step a"
else
  step c "hipdnn-ep-run built-in model on the GPU"        60  380 step_run
  step b "test programs, GPU backend, ORT 1.29 + 1.30"   150  320 step_tests
  step h "concurrency: 8 threads, one session, vs alone" 240  200 step_threads
  step i "out of memory: limit named, then recovery"      90  170 step_oom
  step e "ResNet-50 via Python API vs CPU EP (b1, b8)"   180  150 step_model
  step f "leak: 10k runs, 8 threads, mixed batches"      150  120 step_leak
  step d "ONNX node conformance, GPU, strict (no TF32)"  400   90 step_conformance
  step k "ONNX node conformance, GPU, TF32 mode"         240   60 step_tf32
  step j "fuzz: mutated models, no crash/hang/diff"      200   40 step_fuzz
  step g "compute-sanitizer memcheck (GPU op tests)"     180    0 step_sanitizer
fi

write_summary
echo
echo "=================================== gpu-check summary ==================================="
echo "GPU: ${GPU_DESC:-unknown}   total $(elapsed)s   $(date -u '+%Y-%m-%d %H:%M UTC')"
cat "$OUT/summary.txt"
fails=0
for s in "${S_STATUS[@]}"; do [ "$s" = PASS ] || fails=$((fails + 1)); done
echo "files in $OUT: $(cd "$OUT" && ls | tr '\n' ' ')"
if (( fails > 0 )); then
  echo "gpu-check: $fails step(s) did not pass"
  exit 1
fi
echo "gpu-check: all steps passed"
exit 0
