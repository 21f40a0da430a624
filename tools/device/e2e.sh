#!/usr/bin/env bash
# End-to-end benchmark on the device machine, run from the repository root.
#   tools/device/e2e.sh BUNDLE [OUTDIR]
# BUNDLE is a directory made here by `convc-e2e prepare --out BUNDLE`; the iree-base-runtime
# wheel (cp312) must be in .whl/. Writes e2e.json and e2e.png.
set -euo pipefail
BUNDLE=${1:?bundle directory}
OUTDIR=${2:-${OUT:-out}}
mkdir -p "$OUTDIR"
source "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 -m convc.tools.gpu.e2e --bundle "$BUNDLE" --out "$OUTDIR" 2>&1 | tee "$OUTDIR/e2e.log"
