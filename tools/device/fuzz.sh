#!/usr/bin/env bash
# A convc-fuzz bundle on the device machine, from the repository root:
#   tools/device/fuzz.sh BUNDLE_OR_TARBALL [OUTDIR]
# BUNDLE comes from `convc-fuzz prepare --out BUNDLE` (a .tar.xz of it is unpacked first: large
# bundles compress ~16x). Every (problem, schedule) pair runs in the GPU check with --isolate
# (child processes restart after a kernel fault), NaN-poisoned outputs against PyTorch fp32.
set -uo pipefail
SRC=${1:?bundle directory or .tar.xz}
OUTDIR=${2:-${OUT:-out}}
mkdir -p "$OUTDIR"
source "$(dirname "$0")/env.sh"
if [ -f "$SRC" ]; then
  DEST=/tmp/fuzz_$(basename "$SRC" .tar.xz); mkdir -p "$DEST"; tar xJf "$SRC" -C "$DEST"
  BUNDLE=$(dirname "$(find "$DEST" -name manifest.json | head -1)")
else
  BUNDLE=$SRC
fi
name=$(basename "$BUNDLE")
python3 -m convc.tools.gpu.check --bundle "$BUNDLE" --driver cuda --isolate --workers ${WORKERS:-12} --rows "$OUTDIR/$name.rows.jsonl" --json "$OUTDIR/$name.json" \
  > "$OUTDIR/$name.log" 2>&1
echo "$name: $(tail -1 "$OUTDIR/$name.log")"
grep -E "FAIL" "$OUTDIR/$name.log" | grep -v "^ *\[" | head -40
