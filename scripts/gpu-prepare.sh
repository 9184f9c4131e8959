#!/usr/bin/env bash
# Here (no GPU): builds the tree that scripts/gpu-run.sh runs on the GPU machine, into
# .dev/gpu-build (ignored by git, carried by the device tool), with the Debian runtime
# libraries the GPU machine lacks (shaderc) beside libtc. The Vulkan loader travels as a .deb
# in .gl/ (see the device README). Criterion is not needed there: the GPU checks are
# `tc conformance` and `tc bench`, which are built into the tc command.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh .dev/gpu-build -DTC_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release
cp -L /usr/lib/x86_64-linux-gnu/libshaderc.so.1 .dev/gpu-build/lib/
if [ ! -f .gl/libvulkan1_*.deb ]; then
  mkdir -p .gl /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  apt-get $o update -qq && (cd .gl && apt-get $o download libvulkan1)
fi
du -sh .dev/gpu-build .gl
