#!/usr/bin/env bash
# Issue 35: zstd/LZ4 Parquet and Arrow IPC and Delta Lake tables from `colonnade export`, read by
# pyarrow, Polars, DuckDB and delta-rs with Colonnade's answers; and (unless --check-only) the zstd
# writers timed beside Polars, DuckDB and delta-rs on the same table, in one run.
#
#   Benchmarks/peers/lakehouse.sh [--size small|medium|large] [--repeat R] [--check-only] [--json FILE] [--no-build]
#
# large is the 20 M-row table (2,000 tickers x 10,000 days). Exit status: 0 all agree, 1 a
# MISMATCH, 2 set-up failed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
size=small repeat=3 check=0 json="" build=1
die() { echo "lakehouse.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --size) size="${2:?--size needs a value}"; shift 2 ;;
        --repeat) repeat="${2:?--repeat needs a value}"; shift 2 ;;
        --check-only) check=1; shift ;;
        --json) json="${2:?--json needs a file}"; shift 2 ;;
        --no-build) build=0; shift ;;
        -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option '$1'" ;;
    esac
done
. "$here/common.sh"
peers_dimensions "$size"
peers_venv
"$venv/bin/python" -c "import deltalake" 2>/dev/null || "$venv/bin/pip" install -q deltalake || die "cannot install deltalake"
"$venv/bin/python" -c "import duckdb, polars, pyarrow, deltalake" 2>/dev/null || die "the venv cannot import duckdb, polars, pyarrow, deltalake"
if [ "$build" = 1 ]; then
    peers_build
fi
bin="$root/.build/release/colonnade"
[ -x "$bin" ] || die "no colonnade binary at $bin"
data="$here/.data"
mkdir -p "$data"
snapshot="$data/$size-seed42.snapshot"
if [ ! -f "$snapshot" ]; then
    rm -f "$data/$size-seed42.tmp.snapshot"
    "$bin" generate --tickers "$tickers" --days "$days" --seed 42 --snapshot "$data/$size-seed42.tmp.snapshot" >&2 \
        || die "colonnade generate failed"
    mv "$data/$size-seed42.tmp.snapshot" "$snapshot"
    rm -f "$data/$size-seed42.tmp.snapshot.lock"
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (the machine may be shared)"
if [ "$check" = 0 ]; then
    # Colonnade in process (to the page cache and with fsync; one-day append), same table.
    # Its JSON (named from --json's, whatever that ends in) is embedded in lakehouse.py's report.
    bench_json="${json:+$json.colonnade-bench.json}"
    COLONNADE_BENCH_DIR="$data" "$root/.build/release/colonnade-bench" --suite lakehouse --size "$size" \
        ${bench_json:+--json "$bench_json"} || die "colonnade-bench failed"
fi
work="$data/lakehouse"
rm -rf "$work"
args=(--colonnade "$bin" --snapshot "$snapshot" --workdir "$work" --repeat "$repeat")
[ "$check" = 1 ] && args+=(--check-only)
[ "$size" = large ] && [ "$check" = 0 ] && args+=(--bench-only)  # the checks run on small and medium tables
[ -n "$json" ] && args+=(--json "$json")
[ -n "${bench_json:-}" ] && args+=(--bench-json "$bench_json")
status=0
"$venv/bin/python" "$here/lakehouse.py" "${args[@]}" || status=$?
rm -rf "$work"
[ -n "${bench_json:-}" ] && rm -f "$bench_json"
exit "$status"
