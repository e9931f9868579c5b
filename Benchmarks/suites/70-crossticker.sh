#!/usr/bin/env bash
# Issue 31: X1-X4 across tickers (momentum decile --on latest, relative strength by ref, breadth
# per date, weekly bars) in Colonnade beside Polars and DuckDB, same data, same run, same threads,
# answers checked equal; and colonnade-bench's crossticker suite.
set -euo pipefail
"$BENCH_ROOT/Benchmarks/peers/crossticker.sh" --no-build --size "$BENCH_SIZE" --repeat "$BENCH_REPEAT" --json "$BENCH_JSON"
