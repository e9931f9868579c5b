#!/usr/bin/env bash
# Colonnade vs DuckDB, Polars, NumPy and SQLite on the same generated data.
#
#   Benchmarks/peers/run.sh [--size small|medium|large] [--threads N] [--repeat R] [--seed S]
#                           [--engines duckdb,polars,numpy,sqlite] [--json FILE] [--svg DIR] [--no-build]
#
# Builds colonnade (release), generates the data once into Benchmarks/peers/.data/ (a snapshot
# and the same rows as CSV, both from `colonnade generate`), creates Benchmarks/peers/.venv with
# the pinned peers from requirements.txt, then runs peers.py, which prints a Markdown table.
# Exit status: 0 all engines agree, 1 some disagree (MISMATCH lines), 2 set-up failed.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
size=small threads="" repeat=10 seed=42 json="" svg="" engines="" build=1

die() { echo "run.sh: $*" >&2; exit 2; }
usage() { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }

while [ $# -gt 0 ]; do
    case "$1" in
        --size) size="${2:?--size needs a value}"; shift 2 ;;
        --threads) threads="${2:?--threads needs a value}"; shift 2 ;;
        --repeat) repeat="${2:?--repeat needs a value}"; shift 2 ;;
        --seed) seed="${2:?--seed needs a value}"; shift 2 ;;
        --json) json="${2:?--json needs a file}"; shift 2 ;;
        --svg) svg="${2:?--svg needs a directory}"; shift 2 ;;
        --engines) engines="${2:?--engines needs a list}"; shift 2 ;;
        --no-build) build=0; shift ;;
        -h|--help) usage 0 ;;
        *) echo "run.sh: unknown option '$1'" >&2; usage 2 ;;
    esac
done

# The sizes of colonnade-bench (Benchmarks/ColonnadeBenchmarks), and its seed (42).
. "$here/common.sh"
peers_dimensions "$size"
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || die "--repeat needs a positive integer"
if [ -z "$threads" ]; then threads="$(nproc)"; fi
[[ "$threads" =~ ^[1-9][0-9]*$ ]] || die "--threads needs a positive integer"
[[ "$seed" =~ ^[0-9]+$ ]] || die "--seed needs a non-negative integer"

# 1. colonnade, release build.
command -v python3 >/dev/null || die "python3 is required (3.9 or newer)"
if [ "$build" = 1 ]; then
    command -v swift >/dev/null || die "swift is not on PATH (needed to build colonnade; or pass --no-build with a built .build/release/colonnade)"
    echo "run.sh: building colonnade (swift build -c release --product colonnade) ..." >&2
    (cd "$root" && swift build -c release --product colonnade >&2) || die "swift build failed"
    bin="$(cd "$root" && swift build -c release --show-bin-path)/colonnade"
else
    bin="$root/.build/release/colonnade"
fi
[ -x "$bin" ] || die "no colonnade binary at $bin (build it: swift build -c release --product colonnade)"

# 2. The data, generated once per size and seed. Written to temporary names, then renamed,
#    so an interrupted run never leaves a half-written file that a later run would trust.
. "$here/generated-data.sh"
refresh_generated_data
data="$here/.data"
mkdir -p "$data"
base="$data/$size-seed$seed"
snapshot="$base.snapshot" csvfile="$base.csv"
if [ ! -f "$snapshot" ]; then
    echo "run.sh: generating $tickers tickers × $days days (seed $seed) → $snapshot ..." >&2
    rm -f "$base.tmp.snapshot"
    "$bin" generate --tickers "$tickers" --days "$days" --seed "$seed" --snapshot "$base.tmp.snapshot" >&2 \
        || die "colonnade generate --snapshot failed"
    mv "$base.tmp.snapshot" "$snapshot"
    rm -f "$base.tmp.snapshot.lock"  # the lock file of the temporary name
    rm -f "$csvfile"   # a CSV from an older snapshot must not be paired with this one
fi
if [ ! -f "$csvfile" ]; then
    echo "run.sh: generating the same rows as CSV → $csvfile ..." >&2
    rm -f "$base.tmp.csv"
    if ! "$bin" generate --tickers "$tickers" --days "$days" --seed "$seed" --csv "$base.tmp.csv" 2>"$data/generate.err" >&2; then
        if grep -q "not implemented" "$data/generate.err"; then
            # A colonnade without `generate --csv` yet: write the snapshot's rows (the same data) as
            # CSV with `export`, or failing that with `filter --columns all --format csv`.
            echo "run.sh: this colonnade has no 'generate --csv' yet; writing the snapshot's rows as CSV instead" >&2
            # (In a subshell that outlives the command, so a crash is reported into export.err, not here.)
            if ! ( "$bin" export --snapshot "$snapshot" --format csv --output "$base.tmp.csv"; status=$?; exit $status ) \
                    >"$data/export.err" 2>&1; then
                "$bin" filter --snapshot "$snapshot" --columns all --format csv >"$base.tmp.csv" 2>"$data/export.err" \
                    || { cat "$data/export.err" >&2; die "colonnade could not write the data as CSV"; }
            fi
        else
            cat "$data/generate.err" >&2
            die "colonnade generate --csv failed"
        fi
    fi
    mv "$base.tmp.csv" "$csvfile"
fi

# 3. The peers, pinned, in a virtual environment of their own.
venv="$here/.venv"
req="$here/requirements.txt"
stamp="$venv/.installed-requirements"
if [ ! -x "$venv/bin/python" ]; then
    echo "run.sh: creating $venv ..." >&2
    python3 -m venv "$venv" || die "python3 -m venv failed (on Debian/Ubuntu: apt-get install python3-venv)"
fi
if ! cmp -s "$req" "$stamp" 2>/dev/null; then
    echo "run.sh: pip install -r requirements.txt (duckdb, polars, numpy) ..." >&2
    if ! "$venv/bin/python" -m pip install --disable-pip-version-check -q -r "$req" >&2; then
        die "pip could not install the peers from $req (offline? no access to PyPI or a mirror?
       Set PIP_INDEX_URL to a reachable index, or install them into $venv by hand, then re-run)"
    fi
    cp "$req" "$stamp"
fi
"$venv/bin/python" -c "import duckdb, polars, numpy" 2>/dev/null \
    || die "the venv at $venv cannot import duckdb, polars and numpy; delete it and re-run"

# 4. Measure.
args=(--csv "$csvfile" --snapshot "$snapshot" --colonnade "$bin" --threads "$threads" --repeat "$repeat"
      --size "$size ($tickers tickers × $days days, seed $seed)" --markdown "$data/last-$size.md")
[ -n "$json" ] && args+=(--json "$json")
[ -n "$svg" ] && args+=(--svg "$svg")
[ -n "$engines" ] && args+=(--engines "$engines")
exec "$venv/bin/python" "$here/peers.py" "${args[@]}"
