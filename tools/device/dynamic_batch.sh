#!/usr/bin/env bash
# Dynamic batch on the device machine, run from the repository root:
#   tools/device/dynamic_batch.sh E2E_BUNDLE SMALL_VMFB [OUTDIR]
# E2E_BUNDLE: `convc-e2e prepare --only resnet50_dyn_b1,resnet50_dyn_b7,resnet50_dyn_b32,
# resnet50_dyn_f32_b5,resnet50_b1,resnet50_b32` (one dynamic-batch vmfb run at several batches,
# checked against PyTorch fp32 and timed next to the static builds); SMALL_VMFB: a small
# dynamic-batch f16 model (3x3 convs, a residual, a GEMM-form 1x1) whose input is Nx32x20x20,
# run under compute-sanitizer memcheck, racecheck and synccheck at batches 1 and 5.
set -uo pipefail
BUNDLE=${1:?e2e bundle}
SMALL=${2:?small dynamic-batch vmfb}
OUTDIR=${3:-${OUT:-out}}
mkdir -p "$OUTDIR"
source "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 -m convc.tools.gpu.e2e --bundle "$BUNDLE" --out "$OUTDIR" --iree-only --variants convc 2>&1 | tee "$OUTDIR/e2e.log"
for tool in memcheck racecheck synccheck; do
  timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 9 \
    python3 -m convc.runtime.invoke "$SMALL" --no-mmap --input 1x32x20x20xf16 --batches 1,5 > "$OUTDIR/run.log" 2>&1
  rc=$?
  echo "dynamic batch (1, 5) $tool rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUTDIR/run.log" | tail -1)" | tee -a "$OUTDIR/sanitize.log"
  { echo "==== $tool rc=$rc"; tail -20 "$OUTDIR/run.log"; } >> "$OUTDIR/sanitize_details.log"
done
