#!/bin/sh
# Build reclaimlab as one abi3 wheel (CPython >= 3.9, this OS and CPU architecture) into
# dist/, to install on machines without a Rust toolchain: copy the wheel over and
# `pip install reclaimlab-*.whl` (README, "Installing without a toolchain").
# Extra arguments go to `maturin build` (e.g. --target, --zig for an older glibc).
set -eu
cd "$(dirname "$0")/.."
python3 -m maturin --version >/dev/null 2>&1 || python3 -m pip install 'maturin>=1.7,<2'
python3 -m maturin build --release --out dist "$@"
ls -1 dist/reclaimlab-*-abi3-*.whl
