#!/usr/bin/env bash
# Installs the Debian packages tc needs to build and test, when any is missing.
set -u
pkgs=(cmake ninja-build gcc pkg-config libffi-dev libcriterion-dev libopenblas-dev
      libvulkan-dev libshaderc-dev spirv-tools mesa-vulkan-drivers vulkan-validationlayers)
# Optional: what a missing package only skips. chromium renders the `tc ab --html` page in
# tests/ab_check.sh; if it cannot be installed, that check says so and skips the rendering.
optional=(chromium graphviz)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
missing_optional=()
for p in "${optional[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing_optional+=("$p")
done
[ ${#missing[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq || [ ${#missing[@]} -eq 0 ] || exit 1
if [ ${#missing[@]} -gt 0 ]; then
  echo "tc: installing missing Debian packages: ${missing[*]}"
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" || exit 1
fi
if [ ${#missing_optional[@]} -gt 0 ]; then
  echo "tc: installing optional Debian packages: ${missing_optional[*]}"
  $sudo apt-get install -y -qq --no-install-recommends "${missing_optional[@]}" ||
    echo "tc: could not install ${missing_optional[*]}: the checks that need them will be skipped"
fi
exit 0
