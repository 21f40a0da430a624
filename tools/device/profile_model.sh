#!/usr/bin/env bash
# Nsight Compute profile of chosen kernels of a whole model on the device machine, from the
# repository root:
#   tools/device/profile_model.sh BUNDLE CASE OUTDIR REGEX[,REGEX...]
# BUNDLE comes from `convc-e2e prepare` (the case's parameters are made on the device, as
# convc.tools.gpu.e2e makes them). For each kernel-name regex, the first launch of its second call: the
# full section set as CSV (details) and per-SASS-instruction warp-stall samples (source);
# everything packed in OUTDIR/profile_CASE.tar.gz.
set -uo pipefail
BUNDLE=${1:?bundle directory}
CASE=${2:?case name}
OUTDIR=${3:?output directory}
REGEXES=${4:?comma-separated kernel-name regexes}
mkdir -p "$OUTDIR"
source "$(dirname "$0")/env.sh"
source "$(dirname "$0")/ncu_tables.sh"
work=$(mktemp -d)
i=0
for rx in ${REGEXES//,/ }; do
  i=$((i + 1))
  # the first call loads the module (and may record it): profile a later launch
  timeout 300 ncu --set full --import-source no --launch-skip 1 --launch-count 1 -k "regex:$rx" -o "$work/k$i" -f \
    python3 -m convc.tools.gpu.e2e --bundle "$BUNDLE" --out "$work" --invoke-only "$CASE" --count 3 \
    > "$work/k$i.log" 2>&1
  echo "k$i $rx rc=$?"
  ncu_tables "$work/k$i"
done
tar -czf "$OUTDIR/profile_$CASE.tar.gz" -C "$work" .
