#!/usr/bin/env bash
# The transposed-conv bench on the device machine, run from the repository root:
#   tools/device/bench_transposed.sh BUNDLE [OUTDIR]
# BUNDLE comes from `python3 -m convc.tools.transposed prepare --out BUNDLE`. Writes
# transposed.json (convc against cuDNN's conv_transpose2d per layer, every output checked).
set -uo pipefail
BUNDLE=${1:?bundle directory}
OUTDIR=${2:-${OUT:-out}}
mkdir -p "$OUTDIR"
source "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 -m convc.tools.gpu.bench_transposed --bundle "$BUNDLE" --out "$OUTDIR" 2>&1 | grep -v -i warn | tee "$OUTDIR/transposed.log"
