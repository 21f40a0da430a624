#!/usr/bin/env bash
# The whole end-to-end record on the device machine, run from the repository root: every case of
# the bundle with eager, torch.compile default and mode="reduce-overhead", each case in its own
# process, spread over the machine's GPUs (nvidia-h200-x4 ran the 25 cases in 461 s).
#   tools/device/e2e_record.sh BUNDLE [OUTDIR] [e2e_record options]
# BUNDLE comes from `convc-e2e prepare --out BUNDLE`. Writes e2e.json, e2e.png, per-case logs.
set -uo pipefail
BUNDLE=${1:?bundle directory}
OUTDIR=${2:-${OUT:-out}}
shift $(( $# >= 2 ? 2 : 1 ))
mkdir -p "$OUTDIR"
source "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 -m convc.tools.gpu.e2e_record --bundle "$BUNDLE" --out "$OUTDIR" "$@" 2>&1 | grep -v -i warn | tee "$OUTDIR/e2e_record.log"
