#!/usr/bin/env bash
# Packs a CUDA build for bench/gpu_check.sh's PREBUILT, so that a device machine spends its
# minutes measuring instead of building (the build took 328 s of 16 cores there on 2026-12-04):
# cosmic, cosmic_tests and cosmic_bench, stripped, with the shared libraries the device image
# lacked (libyaml-cpp, libbenchmark), into out/gpu-bin.tar.xz (the device tool carries at most
# 64 MiB). On the device:
#
#   bench/gpu_prebuilt.sh [BUILD_DIR]      # here, after building BUILD_DIR (default build-cuda)
#   tar xJf out/gpu-bin.tar.xz -C out && PREBUILT=out/gpu-bin STUDY=0 bench/gpu_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-cuda}
dest=out/gpu-bin
rm -rf "$dest" out/gpu-bin.tar.xz
mkdir -p "$dest/tests" "$dest/bench" "$dest/lib"
for b in cosmic tests/cosmic_tests bench/cosmic_bench; do strip -o "$dest/$b" "$build/$b"; done
for l in libyaml-cpp.so.0.7 libbenchmark.so.1debian; do cp -L "/usr/lib/x86_64-linux-gnu/$l" "$dest/lib/"; done
# The tests and benchmarks read data/ at the path compiled into them: gpu_check.sh links it there.
sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" | sed 's|$|/data|' >"$dest/data_dir.txt"
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' and uncommitted changes'), built $(date -u +%FT%TZ)" \
  >"$dest/commit.txt"
tar cJf out/gpu-bin.tar.xz -C out gpu-bin
du -h out/gpu-bin.tar.xz
