#!/usr/bin/env bash
# compute-sanitizer (memcheck, racecheck, synccheck) on one layer of each sm_90a kernel family,
# run through the IREE runtime on the device machine (a convc vmfb of one layer holds only the
# convc kernel, so every launch is checked), from the repository root:
#   tools/device/sanitize.sh BUNDLE [OUTDIR] [LAYERS]
# BUNDLE comes from `convc-bench prepare`; writes sanitize.log and a one-line verdict per run.
set -uo pipefail
BUNDLE=${1:?bundle directory}
OUTDIR=${2:-${OUT:-out}}
LAYERS=${3:-valid_3x3_64_odd,n1_3x3_512_7x7,c24_1x1_to_144,r50_l2_3x3_128}
mkdir -p "$OUTDIR"
source "$(dirname "$0")/env.sh"
for layer in ${LAYERS//,/ }; do
  for tool in memcheck racecheck synccheck; do
    log="$OUTDIR/run.log"
    timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 9 \
      python3 -m convc.tools.gpu.bench --bundle "$BUNDLE" --invoke-only "$layer" --count 2 > "$log" 2>&1
    rc=$?
    echo "$layer $tool rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)" | tee -a "$OUTDIR/sanitize.log"
    { echo "==== $layer $tool rc=$rc"; tail -40 "$log"; } >> "$OUTDIR/sanitize_details.log"
  done
done
