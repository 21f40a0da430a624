#!/usr/bin/env bash
# convc-tune on the device machine, from the repository root:
#   tools/device/tune.sh BUNDLE [OUTDIR]
# BUNDLE is made here by `convc-tune prepare ... --out BUNDLE`; the iree-base-runtime wheel
# (cp312) must be in .whl/. Writes OUTDIR/tune.json; bring it back and run
# `convc-tune collect OUTDIR/tune.json` to update the tuning cache. ITERS (50) and ROUND_TIMEOUT
# (120 s: a candidate silent that long counts as hung) may be set in the environment.
set -euo pipefail
BUNDLE=${1:?bundle directory}
OUTDIR=${2:-${OUT:-out}}
mkdir -p "$OUTDIR"
source "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
python3 -m convc.tools.gpu.tune --bundle "$BUNDLE" --out "$OUTDIR" ${ITERS:+--iters $ITERS} ${ROUND_TIMEOUT:+--round-timeout $ROUND_TIMEOUT} 2>&1 | tee "$OUTDIR/tune.log"
