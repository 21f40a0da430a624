#!/usr/bin/env bash
# Runtime image sizes on the device machine, run from the repository root:
#   tools/device/dynamic_spatial.sh BUNDLE [OUTDIR]
# BUNDLE: `python3 -m convc.tools.gpu.dynamic_spatial prepare --out BUNDLE` (one build with dynamic
# H and W); checks it at several sizes against numpy, then again under compute-sanitizer
# memcheck, racecheck and synccheck. A `prepare-random --out BUNDLE` draw in the same directory
# (random.json: random convs, RGB stems, depthwise convs and max-pools) is checked too, then
# again under memcheck.
set -uo pipefail
BUNDLE=${1:?bundle directory}
OUTDIR=${2:-${OUT:-out}}
mkdir -p "$OUTDIR"
source "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 -m convc.tools.gpu.dynamic_spatial check --bundle "$BUNDLE" --json "$OUTDIR/dynamic_spatial.json" 2>&1 | tee "$OUTDIR/dynamic_spatial.log"
for tool in memcheck racecheck synccheck; do
  timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 9 \
    python3 -m convc.tools.gpu.dynamic_spatial check --bundle "$BUNDLE" > "$OUTDIR/run.log" 2>&1
  rc=$?
  echo "runtime H/W $tool rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUTDIR/run.log" | tail -1)" | tee -a "$OUTDIR/sanitize.log"
  { echo "==== $tool rc=$rc"; tail -20 "$OUTDIR/run.log"; } >> "$OUTDIR/sanitize_details.log"
done
if [ -f "$BUNDLE/random.json" ]; then
  python3 -m convc.tools.gpu.dynamic_spatial check-random --bundle "$BUNDLE" --json "$OUTDIR/random.json" 2>&1 | tee "$OUTDIR/random.log" | tail -3
  # the random draws, stems and window ops under memcheck too
  timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 \
    python3 -m convc.tools.gpu.dynamic_spatial check-random --bundle "$BUNDLE" > "$OUTDIR/run.log" 2>&1
  rc=$?
  echo "random draws memcheck rc=$rc $(grep -E 'ERROR SUMMARY' "$OUTDIR/run.log" | tail -1)" | tee -a "$OUTDIR/sanitize.log"
fi
