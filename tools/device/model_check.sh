#!/usr/bin/env bash
# Whole-model check on the device machine, run from the repository root.
#   tools/device/model_check.sh BUNDLE [OUTDIR]
# BUNDLE is a directory made here by `convc-models prepare --out BUNDLE`; the iree-base-runtime
# wheel (cp312) must be in .whl/.
set -euo pipefail
BUNDLE=${1:?bundle directory}
OUTDIR=${2:-${OUT:-out}}
mkdir -p "$OUTDIR"
source "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 -m convc.tools.gpu.model_check --bundle "$BUNDLE" --driver cuda --json "$OUTDIR/model_check.json" 2>&1 | tee "$OUTDIR/model_check.log"
