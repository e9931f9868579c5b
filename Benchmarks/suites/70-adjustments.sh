#!/usr/bin/env bash
# Issue 33: verify --adjustments beside verify, adjust beside a plain save, and fetch --update's
# work after its downloads with one split among every ticker beside none (the recomputing path),
# in process on the bench table (Benchmarks/ColonnadeBenchmarks/AdjustmentSuite.swift); then the
# same update end to end, HTTP included: `colonnade fetch --update` as a whole process against a
# loopback vendor on the generated table of the same size (Benchmarks/peers/update_e2e.py).
set -euo pipefail
"$BENCH_BIN/colonnade-bench" --suite adjustments --size "$BENCH_SIZE" --json "$BENCH_JSON"
here="$BENCH_ROOT/Benchmarks/peers"
root="$BENCH_ROOT"
die() { echo "70-adjustments.sh: $*" >&2; exit 2; }
. "$here/common.sh"
. "$here/generated-data.sh"
suite_generated_snapshot
base="$here/.data/$size-seed42"
label="$(python3 -c "import sys; n = int(sys.argv[1]) * int(sys.argv[2]); print('%dM' % (n // 1000000) if n >= 1000000 else '%dk' % (n // 1000))" "$tickers" "$days")"
python3 "$here/update_e2e.py" --bin "$BENCH_BIN/colonnade" --base "$base.snapshot" \
    --runs "$([ "$BENCH_SIZE" = large ] && echo 3 || echo 5)" --label "$label" --json "$BENCH_JSON"
