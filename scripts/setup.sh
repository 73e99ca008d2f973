#!/usr/bin/env bash
# Installs cosmic's dependencies from Debian packages (only those missing) and builds it in
# build/. The CUDA backend is built when nvcc is found (set COSMIC_CMAKE_ARGS=-DCOSMIC_CUDA=OFF
# to skip it, or =ON to require it). Safe to run again: it only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make pkg-config libyaml-cpp-dev libcxxopts-dev nlohmann-json3-dev libgtest-dev libbenchmark-dev
          libhdf5-dev zlib1g-dev python3 python3-h5py python3-numpy python3-matplotlib python3-xarray python3-h5netcdf)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# nvcc lives outside PATH in the usual toolkit layout.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

# shellcheck disable=SC2086
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${COSMIC_CMAKE_ARGS:-} >/dev/null
cmake --build build -j"$(nproc)"
