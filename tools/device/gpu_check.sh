#!/usr/bin/env bash
# GPU check on the device machine, run from the repository root.
#   tools/device/gpu_check.sh BUNDLE [OUTDIR]
# BUNDLE is a directory made here by `convc-suite compile --target sm_90a --out BUNDLE`;
# the iree-base-runtime wheel (cp312) must be in .whl/. Installs the runtime and convc into
# /tmp/site (no network needed), then runs convc.tools.gpu.check on every layer.
set -euo pipefail
BUNDLE=${1:?bundle directory}
OUTDIR=${2:-${OUT:-out}}
mkdir -p "$OUTDIR"
source "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 -m convc.tools.gpu.check --bundle "$BUNDLE" --driver cuda --json "$OUTDIR/gpu_check.json" --repeats ${REPEATS:-20} 2>&1 | tee "$OUTDIR/gpu_check.log"
