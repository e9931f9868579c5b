#!/usr/bin/env bash
# Ingest end to end (issue 13): `colonnade import` of per-ticker JSON files and of one datatable
# CSV beside DuckDB read_json/read_csv, Polars read_csv and pyarrow read_csv, at 1 and 2 threads.
#
#   Benchmarks/peers/ingest.sh [--size small|medium|large] [--repeat R] [--threads 1,2] [--json FILE] [--no-build]
#
# 1. Builds colonnade (release) unless --no-build.
# 2. Generates the inputs once into .data/ingest-SIZE/ (`colonnade generate --json-dir`, `--csv`,
#    seed 42, the sizes of colonnade-bench and run.sh).
# 3. Runs ingest.py (see its doc string for what each figure includes).
# Exit status: 0 done, 2 set-up failed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
size=small repeat=3 threads=1,2 json="" build=1
die() { echo "ingest.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --size) size="${2:?--size needs a value}"; shift 2 ;;
        --repeat) repeat="${2:?--repeat needs a value}"; shift 2 ;;
        --threads) threads="${2:?--threads needs a value}"; shift 2 ;;
        --json) json="${2:?--json needs a file}"; shift 2 ;;
        --no-build) build=0; shift ;;
        -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option '$1'" ;;
    esac
done
. "$here/common.sh"
peers_dimensions "$size"

peers_venv
"$venv/bin/python" -c "import duckdb, polars, pyarrow" 2>/dev/null \
    || die "the venv at $venv cannot import duckdb, polars and pyarrow"
if [ "$build" = 1 ]; then
    (cd "$root" && swift build -c release --product colonnade >&2) || die "swift build failed"
fi
bin="$root/.build/release/colonnade"
[ -x "$bin" ] || die "no colonnade binary at $bin"

. "$here/generated-data.sh"
refresh_generated_data
data="$here/.data/ingest-$size"
if [ ! -f "$data/PRICES.csv" ]; then
    rm -rf "$data.tmp"
    mkdir -p "$data.tmp"
    "$bin" generate --tickers "$tickers" --days "$days" --seed 42 --json-dir "$data.tmp/json" >&2 \
        || die "colonnade generate --json-dir failed"
    "$bin" generate --tickers "$tickers" --days "$days" --seed 42 --csv "$data.tmp/PRICES.csv" >&2 \
        || die "colonnade generate --csv failed"
    rm -rf "$data"
    mv "$data.tmp" "$data"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
args=(--colonnade "$bin" --json-dir "$data/json" --csv "$data/PRICES.csv" --workdir "$work" --repeat "$repeat" --threads "$threads")
[ -n "$json" ] && args+=(--json "$json")
"$venv/bin/python" "$here/ingest.py" "${args[@]}"
