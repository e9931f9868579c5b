#!/usr/bin/env bash
# Arrow IPC and Parquet: Colonnade's export/import speed and the peers' on the same data, in one run,
# and a check that pyarrow, Polars and DuckDB read Colonnade's output with Colonnade's answers.
#
#   Benchmarks/peers/interop.sh [--size small|medium|large] [--repeat R] [--check-only] [--json FILE] [--no-build]
#
# 1. Builds colonnade and colonnade-bench (release).
# 2. Generates the snapshot once (as run.sh: `colonnade generate`, seed 42) into .data/.
# 3. colonnade-bench --suite interop --size S: Colonnade's in-process export and import MB/s.
# 4. interop.py: colonnade export in every format, read back by pyarrow, Polars and DuckDB with
#    Q1-Q4 compared against Colonnade's answers, then the peers' writers and readers timed on the
#    same table. --check-only skips steps 3 and the peers' timings (what CI runs).
#    With --json FILE, FILE holds all of it (step 3's report too): Benchmarks/report.py renders
#    docs/bench/interop.json into docs/BENCHMARKS.md.
# Exit status: 0 all readers agree, 1 a MISMATCH, 2 set-up failed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
size=small repeat=3 check=0 json="" build=1
die() { echo "interop.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --size) size="${2:?--size needs a value}"; shift 2 ;;
        --repeat) repeat="${2:?--repeat needs a value}"; shift 2 ;;
        --check-only) check=1; shift ;;
        --json) json="${2:?--json needs a file}"; shift 2 ;;
        --no-build) build=0; shift ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option '$1'" ;;
    esac
done
. "$here/common.sh"
peers_dimensions "$size"

peers_venv
"$venv/bin/python" -c "import duckdb, polars, pyarrow" 2>/dev/null \
    || die "the venv at $venv cannot import duckdb, polars and pyarrow (pip install pyarrow into it)"

if [ "$build" = 1 ]; then
    peers_build
fi
bin="$root/.build/release/colonnade"
[ -x "$bin" ] || die "no colonnade binary at $bin"

. "$here/generated-data.sh"
refresh_generated_data
data="$here/.data"
generated_snapshot "$bin"
snapshot="$data/$size-seed42.snapshot"

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) (the machine may be shared; compare runs from one machine and time)"
if [ "$check" = 0 ]; then
    COLONNADE_BENCH_DIR="$data" "$root/.build/release/colonnade-bench" --suite interop --size "$size" \
        ${json:+--json "$data/interop-bench.json"} || die "colonnade-bench failed"
    echo
fi
args=(--colonnade "$bin" --snapshot "$snapshot" --workdir "$data" --repeat "$repeat" --size "$size")
[ "$check" = 1 ] && args+=(--no-bench)
[ -n "$json" ] && args+=(--json "$json")
[ -n "$json" ] && [ "$check" = 0 ] && args+=(--bench-json "$data/interop-bench.json")
exec "$venv/bin/python" "$here/interop.py" "${args[@]}"
