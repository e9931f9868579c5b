#!/usr/bin/env bash
# DuckDB, Polars, NumPy and SQLite on the same queries, Colonnade through `filter --timing`.
set -euo pipefail
"$BENCH_ROOT/Benchmarks/peers/run.sh" --no-build --size "$BENCH_SIZE" --repeat "$BENCH_REPEAT" --json "$BENCH_JSON"
