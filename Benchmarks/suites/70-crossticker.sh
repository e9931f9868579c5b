#!/usr/bin/env bash
# Issue 31: X1-X4 across tickers (momentum decile --on latest, relative strength by ref, breadth
# per date, weekly bars) in Colonnade beside Polars and DuckDB, same data, same run, same threads,
# answers checked equal; and colonnade-bench's crossticker suite.
set -euo pipefail
"$BENCH_ROOT/Benchmarks/peers/crossticker.sh" --no-build --size "$BENCH_SIZE" --repeat "$BENCH_REPEAT" --json "$BENCH_JSON"
# Pacing for the run of 2026-11-29 (reproduce.sh judges the next suite by the load at its start):
# wait, at most 3 minutes, for this suite's own threads to leave the 1-minute load average.
for _ in $(seq 36); do awk '{ exit !($1 > 1.5) }' /proc/loadavg || break; sleep 5; done
