#!/usr/bin/env bash
# Every figure in docs/BENCHMARKS.md, with one command:
#
#   Benchmarks/reproduce.sh [--size small|medium|large] [--repeat R] [--no-peers]
#
# 1. colonnade-bench --suite all --size SIZE --json docs/bench/colonnade-bench.json (release build)
# 2. Benchmarks/peers/run.sh --size SIZE --json docs/bench/peers.json (DuckDB, Polars, NumPy, SQLite)
#    and Benchmarks/peers/lakehouse.sh --json docs/bench/lakehouse.json (zstd Parquet, Delta; Polars, DuckDB, delta-rs)
# 3. python3 Benchmarks/report.py: docs/BENCHMARKS.md from those two files
# Run it on a quiet machine: the figures are only as good as the machine was idle.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
size=medium repeat=10 peers=1
while [ $# -gt 0 ]; do
    case "$1" in
        --size) size="${2:?--size needs a value}"; shift 2 ;;
        --repeat) repeat="${2:?--repeat needs a value}"; shift 2 ;;
        --no-peers) peers=0; shift ;;
        -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "reproduce.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
case "$size" in small|medium|large) ;; *) echo "reproduce.sh: unknown size '$size'" >&2; exit 2 ;; esac
mkdir -p "$root/docs/bench"
cd "$root"
echo "reproduce.sh: load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# The import and zip suites run the `colonnade` executable beside colonnade-bench: build both.
swift build -c release --product colonnade
swift build -c release --product colonnade-bench
COLONNADE_COMMIT="$(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- Sources Benchmarks Package.swift || echo +dirty)" \
    "$(swift build -c release --show-bin-path)/colonnade-bench" --suite all --size "$size" \
    --json "$root/docs/bench/colonnade-bench.json"
if [ "$peers" = 1 ]; then
    "$here/peers/run.sh" --size "$size" --repeat "$repeat" --json "$root/docs/bench/peers.json"
    # zstd Parquet and Delta export beside Polars, DuckDB and delta-rs (issue 35).
    "$here/peers/lakehouse.sh" --size "$size" --repeat "$repeat" --no-build --json "$root/docs/bench/lakehouse.json"
fi
python3 "$here/report.py"
