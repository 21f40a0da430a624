#!/usr/bin/env bash
# convc-tune on the device machine, from the repository root:
#   tools/device/tune.sh BUNDLE [OUTDIR]
# BUNDLE is made here by `convc-tune prepare ... --out BUNDLE`; the iree-base-runtime wheel
# (cp312) must be in .whl/. Writes OUTDIR/tune.json; bring it back and run
# `convc-tune collect OUTDIR/tune.json` to update the tuning cache.
set -euo pipefail
BUNDLE=${1:?bundle directory}
OUTDIR=${2:-${OUT:-out}}
mkdir -p "$OUTDIR"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
python3 -m pip install -q --no-index --no-deps --no-build-isolation --no-cache-dir --upgrade --target /tmp/site . >/dev/null
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
python3 -m convc.runtime.tune_device --bundle "$BUNDLE" --out "$OUTDIR" ${ITERS:+--iters $ITERS} 2>&1 | tee "$OUTDIR/tune.log"
