# bench/env.sh: the environment every bench/ script runs in, sourced (not
# run) by run.sh and profile.sh with $root set to the repository root:
# OUT (created), PY (the python with torch and onnxruntime), LD_LIBRARY_PATH
# with that python's cuDNN and CUDA libraries first, HIPDNN_EP_LIB.
OUT=${OUT:-$root/bench-out}
mkdir -p "$OUT"
PY=${PY:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3 || echo python3)
SITE=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null || echo "")
ldp=""
for d in "$SITE/nvidia/cudnn/lib" "$SITE/nvidia/cu13/lib" ${LD_LIBRARY_PATH:+"$LD_LIBRARY_PATH"}; do
  [ -d "$d" ] || [[ "$d" == *:* ]] || continue
  ldp="${ldp:+$ldp:}$d"
done
export LD_LIBRARY_PATH=$ldp
export HIPDNN_EP_LIB=${HIPDNN_EP_LIB:-$root/build/lib/libhipdnn_ep.so}
export PYTHONUNBUFFERED=1
