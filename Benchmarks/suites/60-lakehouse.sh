#!/usr/bin/env bash
# Issue 35: zstd Parquet and Delta Lake export beside Polars, DuckDB and delta-rs writing zstd, the
# one-day Delta append, and the read-back check (pyarrow, Polars, DuckDB, delta-rs answer as we do).
set -euo pipefail
"$BENCH_ROOT/Benchmarks/peers/lakehouse.sh" --no-build --size "$BENCH_SIZE" --repeat "$BENCH_REPEAT" --json "$BENCH_JSON"
