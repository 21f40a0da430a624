#!/usr/bin/env bash
# convc-bench on the device machine, from the repository root:
#   tools/device/bench.sh BUNDLE [OUTDIR] [NCU_LAYER]
# BUNDLE is made here by `convc-bench prepare --out BUNDLE`; the iree-base-runtime wheel (cp312)
# must be in .whl/. Times every layer (bench.json, bench.png), then cross-checks the kernel
# timer on one layer with Nsight Compute's gpu__time_duration (ncu.csv, merged into bench.json).
set -euo pipefail
BUNDLE=${1:?bundle directory}
OUTDIR=${2:-${OUT:-out}}
NCU_LAYER=${3:-r50_l3_3x3_256}
mkdir -p "$OUTDIR"
source "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
python3 -m convc.tools.gpu.bench --bundle "$BUNDLE" --out "$OUTDIR" ${ITERS:+--iters $ITERS} ${ONLY:+--only $ONLY} 2>&1 | tee "$OUTDIR/bench.log" || true
if command -v ncu >/dev/null && grep -q "\"$NCU_LAYER\"" "$BUNDLE/manifest.json"; then
  ncu --clock-control none --metrics gpu__time_duration.sum -k regex:'^conv_' --launch-skip 5 --launch-count 10 --csv \
    python3 -m convc.tools.gpu.bench --bundle "$BUNDLE" --invoke-only "$NCU_LAYER" --count 20 \
    > "$OUTDIR/ncu.csv" 2> "$OUTDIR/ncu.err" || true
  python3 -m convc.tools.gpu.bench_ncu "$OUTDIR/bench.json" "$OUTDIR/ncu.csv" "$NCU_LAYER" || true
fi
