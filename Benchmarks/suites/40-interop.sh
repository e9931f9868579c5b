#!/usr/bin/env bash
# Arrow IPC and Parquet export and import beside the peers' writers and readers, and the read-back check.
set -euo pipefail
"$BENCH_ROOT/Benchmarks/peers/interop.sh" --no-build --size "$BENCH_SIZE" --repeat 3 --json "$BENCH_JSON"
