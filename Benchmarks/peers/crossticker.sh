#!/usr/bin/env bash
# Issue 31: the across-ticker questions X1-X4 in Colonnade, Polars and DuckDB on the same generated
# data, answers checked equal (crossticker.py), each engine's in-process query time in one run
# (Colonnade: `filter --timing` on the snapshot, its query_ms), plus colonnade-bench's crossticker
# suite (the engine called in process, 1 and N threads).
#
#   Benchmarks/peers/crossticker.sh [--size small|medium|large] [--repeat R] [--threads N] [--json FILE] [--no-build]
#
# Exit status: 0 all agree, 1 a MISMATCH, 2 set-up failed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
size=small repeat=5 threads="$(nproc)" json="" build=1
die() { echo "crossticker.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --size) size="${2:?--size needs a value}"; shift 2 ;;
        --repeat) repeat="${2:?--repeat needs a value}"; shift 2 ;;
        --threads) threads="${2:?--threads needs a value}"; shift 2 ;;
        --json) json="${2:?--json needs a file}"; shift 2 ;;
        --no-build) build=0; shift ;;
        -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option '$1'" ;;
    esac
done
. "$here/common.sh"
peers_dimensions "$size"
peers_venv
"$venv/bin/python" -c "import duckdb, polars" 2>/dev/null || "$venv/bin/pip" install -q -r "$here/requirements.txt" \
    || die "cannot install the peers (duckdb, polars)"
if [ "$build" = 1 ]; then
    peers_build
fi
bin="$root/.build/release/colonnade"
[ -x "$bin" ] || die "no colonnade binary at $bin"
. "$here/generated-data.sh"
refresh_generated_data
data="$here/.data"
base="$data/$size-seed42"
snapshot="$base.snapshot" csvfile="$base.csv"
if [ ! -f "$snapshot" ]; then
    rm -f "$base.tmp.snapshot"
    "$bin" generate --tickers "$tickers" --days "$days" --seed 42 --snapshot "$base.tmp.snapshot" >&2 \
        || die "colonnade generate --snapshot failed"
    mv "$base.tmp.snapshot" "$snapshot"
    rm -f "$base.tmp.snapshot.lock" "$csvfile"
fi
if [ ! -f "$csvfile" ]; then
    rm -f "$base.tmp.csv"
    "$bin" generate --tickers "$tickers" --days "$days" --seed 42 --csv "$base.tmp.csv" >&2 || die "colonnade generate --csv failed"
    mv "$base.tmp.csv" "$csvfile"
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (the machine may be shared)"
benchjson="$(mktemp)"
trap 'rm -f "$benchjson"' EXIT
"$root/.build/release/colonnade-bench" --suite crossticker --size "$size" --threads "$threads" --json "$benchjson" \
    || die "colonnade-bench --suite crossticker failed"
"$venv/bin/python" "$here/crossticker.py" --csv "$csvfile" --snapshot "$snapshot" --colonnade "$bin" --threads "$threads" \
    --repeat "$repeat" --size "$size" --bench-json "$benchjson" ${json:+--json "$json"}
