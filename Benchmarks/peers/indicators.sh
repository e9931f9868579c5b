#!/usr/bin/env bash
# Issue 30: the indicator screens I1–I4 (and S3 with exact windows), each also `--on latest`,
# through Colonnade (`filter --timing` query_ms; and colonnade-bench --suite indicators in
# process), Polars, TA-Lib and DuckDB on the same generated table, every engine checked to agree.
#
#   Benchmarks/peers/indicators.sh [--size small|medium|large] [--repeat R] [--threads 1,2] [--json FILE] [--no-build]
#
# medium is the issue's size (1,000 tickers × 5,000 days, seed 42: 5 M rows). Exit status: 0 all
# agree, 1 a MISMATCH, 2 set-up failed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
size=medium repeat=5 threads="1,$(nproc)" json="" build=1
die() { echo "indicators.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --size) size="${2:?--size needs a value}"; shift 2 ;;
        --repeat) repeat="${2:?--repeat needs a value}"; shift 2 ;;
        --threads) threads="${2:?--threads needs a list}"; shift 2 ;;
        --json) json="${2:?--json needs a file}"; shift 2 ;;
        --no-build) build=0; shift ;;
        -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option '$1'" ;;
    esac
done
. "$here/common.sh"
peers_dimensions "$size"
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || die "--repeat needs a positive integer"
[[ "$threads" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "--threads needs a comma-separated list of positive integers"
peers_venv
"$venv/bin/python" -c "import talib" 2>/dev/null || "$venv/bin/pip" install -q "ta-lib==0.8.2" || die "cannot install ta-lib"
"$venv/bin/python" -c "import duckdb, polars, numpy, talib" 2>/dev/null || die "the venv cannot import duckdb, polars, numpy, talib"
if [ "$build" = 1 ]; then
    peers_build
fi
bin="$root/.build/release/colonnade"
[ -x "$bin" ] || die "no colonnade binary at $bin"
. "$here/generated-data.sh"
refresh_generated_data
data="$here/.data"
base="$data/$size-seed42"
if [ ! -f "$base.snapshot" ]; then
    rm -f "$base.tmp.snapshot"
    "$bin" generate --tickers "$tickers" --days "$days" --seed 42 --snapshot "$base.tmp.snapshot" >&2 \
        || die "colonnade generate --snapshot failed"
    mv "$base.tmp.snapshot" "$base.snapshot"
    rm -f "$base.tmp.snapshot.lock" "$base.csv"
fi
if [ ! -f "$base.csv" ]; then
    rm -f "$base.tmp.csv"
    "$bin" generate --tickers "$tickers" --days "$days" --seed 42 --csv "$base.tmp.csv" >&2 || die "colonnade generate --csv failed"
    mv "$base.tmp.csv" "$base.csv"
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (the machine may be shared)" >&2
bench_json=""
if [ -n "$json" ]; then bench_json="${json%.json}-colonnade-bench.json"; fi
"$root/.build/release/colonnade-bench" --suite indicators --size "$size" --threads "${threads##*,}" \
    ${bench_json:+--json "$bench_json"} >&2 || die "colonnade-bench --suite indicators failed"
args=(--csv "$base.csv" --snapshot "$base.snapshot" --colonnade "$bin" --threads "$threads" --repeat "$repeat"
      --size "$size ($tickers tickers × $days days, seed 42)")
[ -n "$json" ] && args+=(--json "$json" --bench-json "$bench_json")
status=0
"$venv/bin/python" "$here/indicators.py" "${args[@]}" || status=$?
[ -n "$bench_json" ] && rm -f "$bench_json"
exit "$status"
