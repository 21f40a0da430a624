#!/usr/bin/env bash
# compute-sanitizer memcheck, racecheck, synccheck and initcheck on one layer of every kernel
# family and variant flag, on the device machine, from the repository root:
#   tools/device/sanitize_families.sh BUNDLE [OUTDIR]
# BUNDLE comes from `convc-suite families --out BUNDLE` (tools/families.py). One sanitizer
# process per tool runs every layer (tools/gpu/sanitize.py); a tool that reports anything is
# rerun layer by layer to name the layer. Writes sanitize.log (one verdict line per tool, then
# per layer where rerun) and sanitize_details.log (the reports).
set -uo pipefail
BUNDLE=${1:?bundle directory}
OUTDIR=${2:-${OUT:-out}}
mkdir -p "$OUTDIR"
source "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUTDIR/sanitize.log"
compute-sanitizer --version | tail -1 | tee -a "$OUTDIR/sanitize.log"
LAYERS=$(python3 -c "import json,sys; print(' '.join(e['layer']['name'] for e in json.load(open(sys.argv[1]))['layers'] if e['ok']))" "$BUNDLE/manifest.json")
summary() { grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$1" | tail -1; }
clean() { grep -qE '(ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards)' "$1"; }
for tool in memcheck racecheck synccheck initcheck; do
  log="$OUTDIR/$tool.log"
  extra=""; [ "$tool" = racecheck ] && extra="--racecheck-report all"
  timeout 200 compute-sanitizer --tool "$tool" $extra --error-exitcode 9 \
    python3 -m convc.tools.gpu.sanitize --bundle "$BUNDLE" > "$log" 2>&1
  rc=$?
  echo "$tool all-layers rc=$rc launched=$(grep -c '^== layer' "$log") $(summary "$log")" | tee -a "$OUTDIR/sanitize.log"
  { echo "==== $tool (all layers) rc=$rc"; grep -v '^== layer' "$log" | tail -60; } >> "$OUTDIR/sanitize_details.log"
  if [ $rc -ne 0 ] || ! clean "$log"; then
    for layer in $LAYERS; do
      timeout 60 compute-sanitizer --tool "$tool" $extra --error-exitcode 9 \
        python3 -m convc.tools.gpu.sanitize --bundle "$BUNDLE" --only "$layer" > "$log" 2>&1
      r=$?
      echo "  $tool $layer rc=$r $(summary "$log")" | tee -a "$OUTDIR/sanitize.log"
      [ $r -ne 0 ] && { echo "==== $tool $layer rc=$r"; tail -60 "$log"; } >> "$OUTDIR/sanitize_details.log"
    done
  fi
done
