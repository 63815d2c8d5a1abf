#!/usr/bin/env bash
# Makes a longer real TensorFlow trace for the benchmarks: the d2_tf_cnn fixture script
# (tests/fixtures/scripts/d2_tf_cnn_memory_trace.py) run for STEPS training steps instead of its 60,
# on the CPU with the BFC allocator's memory events, written to target/bench/d2_tf_cnn_STEPS.xplane.pb.
# bench/traces/d2_tf_cnn_250.xplane.pb.gz was made this way with STEPS=250 (TensorFlow 2.21.0); bench/RESULTS.md
# also reports 600 and 1200 steps.
#
# Needs Python 3.12 (PYTHON, default python3.12); TensorFlow goes into a virtual environment of its own
# (TF_VENV, default /tmp/tf-venv), installed from PyPI on first use (a few minutes; about 1.5 GB).
#
# usage: bench/make_trace.sh [STEPS]   (default 1200)
set -euo pipefail
cd "$(dirname "$0")/.."
steps="${1:-1200}"
venv="${TF_VENV:-/tmp/tf-venv}"
script="tests/fixtures/scripts/d2_tf_cnn_memory_trace.py"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import tensorflow' 2>/dev/null; then
  "${PYTHON:-python3.12}" -m venv "$venv"
  "$venv/bin/pip" install -q tensorflow-cpu==2.21.0
fi
logdir="$(mktemp -d)"
trap 'rm -rf "$logdir"' EXIT
"$venv/bin/python" "$script" "$logdir" "$steps" >/dev/null 2>&1
mkdir -p target/bench
out="target/bench/d2_tf_cnn_${steps}.xplane.pb"
find "$logdir" -name '*.xplane.pb' -exec cp {} "$out" \;
ls -l "$out"
