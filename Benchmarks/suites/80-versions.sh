#!/usr/bin/env bash
# Issue 36: a day's write into a store against a full save, and a store of 30 appended days
# against the same store compacted, as whole processes on the generated table of the run's size
# (Benchmarks/versions/suite.py says what is measured and how).
set -euo pipefail
here="$BENCH_ROOT/Benchmarks/peers"
root="$BENCH_ROOT"
die() { echo "80-versions.sh: $*" >&2; exit 2; }
. "$here/common.sh"
. "$here/generated-data.sh"
suite_generated_snapshot
python3 "$BENCH_ROOT/Benchmarks/versions/suite.py" --bin "$BENCH_BIN/colonnade" \
    --base "$here/.data/$size-seed42.snapshot" --work "$here/.data/versions-work" --label "$size" --json "$BENCH_JSON"
