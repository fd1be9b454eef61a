#!/usr/bin/env bash
# Installs the Debian packages hbg needs to build and test.
# Idempotent: when every package is present it does nothing.
set -euo pipefail

packages=(
  cmake g++ make ccache
  antlr4 default-jre-headless libantlr4-runtime-dev
  llvm-19-dev llvm-19-tools
  libeigen3-dev doctest-dev libsuitesparse-dev libcli11-dev
  libopenmpi-dev openmpi-bin
  libsundials-dev
  python3 python3-scipy graphviz
  # The Python module (docs/python.md), its tests and its notebook.
  python3-dev pybind11-dev python3-numpy python3-pytest python3-pandas python3-matplotlib
  python3-nbconvert python3-ipykernel
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "installing: ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
