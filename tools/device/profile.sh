#!/usr/bin/env bash
# Nsight Compute profile of the convc kernel of some bench layers on the device machine, from the
# repository root:
#   tools/device/profile.sh BUNDLE [OUTDIR] LAYERS
# BUNDLE comes from `convc-bench prepare`. Per layer: the full section set as CSV (details) and
# per-SASS-instruction warp-stall samples (source); everything packed in profile.tar.gz.
set -uo pipefail
BUNDLE=${1:?bundle directory}
OUTDIR=${2:-${OUT:-out}}
LAYERS=${3:?comma-separated layer names}
mkdir -p "$OUTDIR"
source "$(dirname "$0")/env.sh"
source "$(dirname "$0")/ncu_tables.sh"
work=$(mktemp -d)
for layer in ${LAYERS//,/ }; do
  timeout 300 ncu --set full --import-source no --launch-skip 3 --launch-count 1 -k regex:'^conv_' \
    -o "$work/$layer" -f \
    python3 -m convc.tools.gpu.bench --bundle "$BUNDLE" --invoke-only "$layer" --count 5 > "$work/$layer.log" 2>&1
  echo "$layer rc=$?"
  ncu_tables "$work/$layer"
done
tar -czf "$OUTDIR/profile.tar.gz" -C "$work" .
