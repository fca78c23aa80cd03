#!/usr/bin/env bash
# Fetches what the build needs into third_party/ (ignored by git) and the
# Debian packages it needs into the system. Idempotent: a second run that
# finds everything in place downloads nothing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tp="$root/third_party"
mkdir -p "$tp"

# --- Debian packages -------------------------------------------------------
# protobuf-c reads ONNX TensorProto files in the conformance runner; libonnx-dev
# ships the onnx.proto it is generated from. hipcc + libamdhip64-dev (HIP 5.2,
# about 68 MB) build the AMD module (backends/hip) in CI; nothing runs on them.
# python3-torchvision + python3-onnx (torch 1.13 CPU, about 150 MB) let
# /usr/bin/python3 export the CI model tests' torchvision models (tests/models.cmake).
# python3-setuptools, -wheel, -pip and -venv build the Python package offline
# and install it into a fresh venv in its test (python/, make wheel).
# libtsan2 is ThreadSanitizer's runtime (make tsan; gcc pulls it in too).
apt_pkgs=(libprotobuf-c-dev protobuf-c-compiler libonnx-dev hipcc libamdhip64-dev
          python3-torchvision python3-onnx
          python3-setuptools python3-wheel python3-pip python3-venv libtsan2)
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "fetch-deps: installing Debian packages: ${missing[*]}"
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# --- ONNX Runtime from npm ---------------------------------------------------
# fetch_npm NAME VERSION SHA256 DEST-STAMP MEMBERS...
# Downloads the tarball with `npm pack`, checks its sha256, extracts MEMBERS.
fetch_npm() {
  local name=$1 version=$2 sha=$3 dest=$4; shift 4
  local tmp; tmp=$(mktemp -d)
  echo "fetch-deps: downloading npm $name@$version"
  (cd "$tmp" && npm pack --silent "$name@$version" >/dev/null 2>&1)
  local tgz; tgz=$(ls "$tmp"/*.tgz)
  echo "$sha  $tgz" | sha256sum -c --quiet - || { echo "fetch-deps: sha256 mismatch for $name@$version" >&2; rm -rf "$tmp"; exit 1; }
  rm -rf "$dest"; mkdir -p "$dest"
  tar -xzf "$tgz" -C "$dest" "$@"
  rm -rf "$tmp"
}

ort129="$tp/ort-1.29"
[ -f "$ort129/.ok" ] || fetch_npm com.github.asus4.onnxruntime 0.4.9 \
  e59788788818fdde1b2e522e766a21ba0f7d8391de55737abf81e32cc801785d "$ort129/pkg" \
  'package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64_x86_64-simulator/onnxruntime.framework/Headers' \
  package/Plugins/Linux/x64/libonnxruntime.so
if [ ! -f "$ort129/.ok" ]; then
  mkdir -p "$ort129/include" "$ort129/lib"
  cp "$ort129"/pkg/package/Plugins/iOS~/onnxruntime.xcframework/ios-arm64_x86_64-simulator/onnxruntime.framework/Headers/*.h "$ort129/include/"
  cp "$ort129/pkg/package/Plugins/Linux/x64/libonnxruntime.so" "$ort129/lib/libonnxruntime.so"
  rm -rf "$ort129/pkg"
  touch "$ort129/.ok"
fi

ort130="$tp/ort-1.30"
[ -f "$ort130/.ok" ] || fetch_npm onnxruntime-node 1.30.0 \
  6e3390d6b783e7be946fad629292799da28d0b42f84856e50d2c1b0383291e75 "$ort130/pkg" \
  package/bin/napi-v6/linux/x64/libonnxruntime.so.1
if [ ! -f "$ort130/.ok" ]; then
  mkdir -p "$ort130/lib"
  cp "$ort130/pkg/package/bin/napi-v6/linux/x64/libonnxruntime.so.1" "$ort130/lib/libonnxruntime.so"
  rm -rf "$ort130/pkg"
  touch "$ort130/.ok"
fi
