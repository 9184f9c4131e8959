#!/usr/bin/env bash
# Configures and builds tc into DIR (default: build). Extra arguments go to cmake.
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
