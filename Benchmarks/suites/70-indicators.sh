#!/usr/bin/env bash
# Issue 30: indicator screens I1–I4 (and S3 with exact windows), each also --on latest, beside
# Polars, TA-Lib and DuckDB (Benchmarks/peers/indicators.py), with colonnade-bench --suite indicators.
set -euo pipefail
"$BENCH_ROOT/Benchmarks/peers/indicators.sh" --no-build --size "$BENCH_SIZE" --repeat "$BENCH_REPEAT" --json "$BENCH_JSON"
