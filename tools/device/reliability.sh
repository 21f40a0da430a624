#!/usr/bin/env bash
# Reliability checks on the device machine, from the repository root, on a bundle made here by
#   convc-suite families --out BUNDLE
# (one layer per kernel family and variant flag):
#   tools/device/reliability.sh BUNDLE [OUTDIR]
# 1. compute-sanitizer memcheck/racecheck/synccheck/initcheck (sanitize_families.sh)
# 2. determinism (100 runs bitwise), 8 concurrent threads, 10,000-invocation soak (tools/gpu/stress.py)
# 3. wrong use at run time: every misuse raises IREE's error, the module stays right (wrong_use)
set -uo pipefail
BUNDLE=${1:?bundle directory}
OUTDIR=${2:-${OUT:-out}}
mkdir -p "$OUTDIR"
source "$(dirname "$0")/env.sh"
bash "$(dirname "$0")/sanitize_families.sh" "$BUNDLE" "$OUTDIR"
python3 -m convc.tools.gpu.stress --bundle "$BUNDLE" --json "$OUTDIR/stress.json" 2>&1 | tail -25 | tee "$OUTDIR/stress.log"
python3 -m convc.tools.gpu.wrong_use --bundle "$BUNDLE" --only ws_cooperative,ws_streamk,tma_split_k,depthwise,tf32 \
  --json "$OUTDIR/wrong_use.json" 2>&1 | tee "$OUTDIR/wrong_use.log" | tail -3
