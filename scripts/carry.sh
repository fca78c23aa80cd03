#!/usr/bin/env bash
# Prepares this checkout for a run on the GPU machine (run it HERE, after the
# build, before handing the tree over):
#   - .carry/ctest.json: ctest's test list of the build (its commands hold this
#     machine's absolute paths; scripts/gpu_check_tests.py rewrites them there)
#   - .carry/lib/: host libraries the carried programs need that the GPU
#     machine may lack (libprotobuf-c.so.1 for hipdnn-ep-conformance)
#   - checks that the build has the EP, the CUDA module and the programs, and
#     that the copy stays under the 64 MiB limit
# and prints the carry list and the command lines to use.
#
# usage: scripts/carry.sh [BUILD_DIR]      (default: build)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
build=${1:-build}
limit=$((64 * 1024 * 1024))
carry=("$build/lib" "$build/bin" third_party/ort-1.29/lib .carry)
bad=0

say() { printf 'carry: %s\n' "$*"; }
need() { if [ -e "$1" ]; then say "ok       $1"; else say "MISSING  $1 ($2)"; bad=1; fi; }

need "$build/lib/libhipdnn_ep.so" "the EP: build first (make build)"
need "$build/lib/libhipdnn_ep_cuda.so" "the CUDA backend module: configure with HIPDNN_EP_CUDA=ON"
need "$build/bin/hipdnn-ep-run" "the main tool"
need "$build/bin/hipdnn-ep-conformance" "the conformance runner"
need "$build/bin/test_conv" "the Conv op test"
need third_party/ort-1.29/lib/libonnxruntime.so "ONNX Runtime 1.29: scripts/fetch-deps.sh"

rm -rf .carry
mkdir -p .carry/lib
if command -v ctest >/dev/null && [ -f "$build/CTestTestfile.cmake" ]; then
  if ctest --test-dir "$build" --show-only=json-v1 >.carry/ctest.raw.json 2>/dev/null; then
    python3 - "$root" "$(cd "$build" && pwd)" <<'EOF'
import json, sys
root, build = sys.argv[1], sys.argv[2]
with open(".carry/ctest.raw.json") as f:
    ct = json.load(f)
with open(".carry/ctest.json", "w") as f:
    json.dump({"source_dir": root, "build_dir": build, "ctest": ct}, f, indent=1)
print(f"carry: ok       .carry/ctest.json ({len(ct.get('tests', []))} tests)")
EOF
    rm -f .carry/ctest.raw.json
  else
    say "WARNING  ctest --show-only failed: the GPU machine falls back to build/bin/test_*"
  fi
else
  say "WARNING  no ctest or no $build/CTestTestfile.cmake: the GPU machine falls back to build/bin/test_*"
fi

# Host libraries of the carried programs that are not part of a base system.
for exe in "$build"/bin/* "$build"/lib/*.so; do
  [ -f "$exe" ] || continue
  ldd "$exe" 2>/dev/null | awk '/=> \//{print $1, $3}'
done | sort -u | while read -r name path; do
  case "$name" in
    libprotobuf-c.so*) cp -L "$path" ".carry/lib/$name" && say "ok       .carry/lib/$name (from $path)" ;;
  esac
done

# The ONNX node tests, compressed (about 5 MB), for the GPU conformance run:
# the GPU machine's onnx package may not ship them.
if [ -d "$root/../shared/onnx-node-tests/node" ]; then
  tar -C "$root/../shared/onnx-node-tests" -cf - node | xz -T2 -1 >.carry/node-tests.tar.xz &&
    say "ok       .carry/node-tests.tar.xz"
fi

# Size of what travels: tracked + untracked-not-ignored files + the carry paths.
tree_bytes=$(git ls-files -co --exclude-standard -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
carry_bytes=0
for p in "${carry[@]}"; do
  [ -e "$p" ] || continue
  b=$(du -sbL "$p" | cut -f1)
  say "$(printf '%8.1f MiB  %s' "$(echo "$b / 1048576" | bc -l)" "$p")"
  carry_bytes=$((carry_bytes + b))
done
total=$((tree_bytes + carry_bytes))
say "$(printf 'work tree %.1f MiB + carry %.1f MiB = %.1f MiB (limit 64 MiB)' \
  "$(echo "$tree_bytes / 1048576" | bc -l)" "$(echo "$carry_bytes / 1048576" | bc -l)" "$(echo "$total / 1048576" | bc -l)")"
if [ "$total" -gt "$limit" ]; then
  say "TOO BIG: drop a carry path or untracked files"
  bad=1
fi

cat <<EOF

carry list (ignored paths the run needs):
  ${carry[*]}
commands (run in the repository root on the GPU machine; \$OUT comes back):
  bash scripts/gpu-check.sh          # issue 3 checks, ~9 min at most
  bash bench/run.sh                  # benchmarks, ~8 min at most
EOF
exit $bad
