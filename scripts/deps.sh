#!/usr/bin/env bash
# Installs the Debian packages tc needs to build and test, when any is missing.
set -u
pkgs=(cmake ninja-build gcc pkg-config libffi-dev libcriterion-dev libopenblas-dev
      libvulkan-dev libshaderc-dev spirv-tools mesa-vulkan-drivers vulkan-validationlayers)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "tc: installing missing Debian packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq || exit 1
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" || exit 1
