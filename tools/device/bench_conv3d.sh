#!/usr/bin/env bash
# The 3-D conv bench on the device machine, run from the repository root:
#   tools/device/bench_conv3d.sh BUNDLE [OUTDIR]
# BUNDLE comes from `python3 -m convc.tools.conv3d prepare --out BUNDLE`. Writes
# conv3d.json (convc against cuDNN's conv3d per layer, every output checked).
set -uo pipefail
BUNDLE=${1:?bundle directory}
OUTDIR=${2:-${OUT:-out}}
mkdir -p "$OUTDIR"
source "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 -m convc.tools.gpu.bench_conv3d --bundle "$BUNDLE" --out "$OUTDIR" --iters ${ITERS:-50} 2>&1 | grep -v -i warn | tee "$OUTDIR/conv3d.log"
