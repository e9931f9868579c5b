#!/usr/bin/env bash
# Issue 32: Colonnade's in-process decode of Polars' (zstd Parquet), pandas' (LZ4 Feather) and
# DuckDB's (Snappy Parquet) default files beside Polars and DuckDB reading them in process
# (peers/interop_read.py, run by the suite, at 1 thread and at every core), the end-to-end
# `colonnade import` of each (with its durable save), and our ZSTD/LZ4 decoders beside
# `zstd -b`/`lz4 -b` on the same frames. Writes colonnade-bench's report with the load averages
# (1, 5, 15 min) at the start and end added; rendered by interop-read.py.
#
# Alone, from the repository (release build, medium size, about 10 minutes):
#   Benchmarks/reproduce.sh --size medium --suite interop-read      # JSON in .build/bench-partial/
# Smoke (small size, checks the JSON renders):
#   Benchmarks/suites/50-interop-read.sh --smoke
set -euo pipefail
if [ "${1:-}" = "--smoke" ]; then
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    cd "$root"
    swift build -c release --product colonnade >&2
    swift build -c release --product colonnade-bench >&2
    export BENCH_ROOT="$root" BENCH_BIN="$(swift build -c release --show-bin-path)" BENCH_SIZE=small
    export BENCH_JSON="$root/.build/interop-read-smoke.json"
    "$0"
    python3 "$root/Benchmarks/suites/interop-read.py" "$BENCH_JSON" > /dev/null
    echo "interop-read smoke: $BENCH_JSON written and rendered" >&2
    exit 0
fi
python="${COLONNADE_PEERS_PYTHON:-$BENCH_ROOT/Benchmarks/peers/.venv/bin/python}"
[ -x "$python" ] || { echo "50-interop-read.sh: no peers' Python (Benchmarks/peers/.venv: make it with Benchmarks/peers/run.sh)" >&2; exit 1; }
command -v zstd > /dev/null && command -v lz4 > /dev/null || { echo "50-interop-read.sh: zstd and lz4 are needed (apt-get install zstd lz4)" >&2; exit 1; }
start="$(cut -d' ' -f1-3 /proc/loadavg)"
COLONNADE_PEERS_PYTHON="$python" \
    "$BENCH_BIN/colonnade-bench" --suite interop-read,codecs --size "$BENCH_SIZE" --json "$BENCH_JSON.bench"
end="$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$BENCH_JSON.bench" "$BENCH_JSON" "$start" "$end" "$python" <<'EOF'
import json, sys
src, dst, start, end, python = sys.argv[1:]
with open(src) as f:
    data = json.load(f)
data["loadavg_start"] = [float(x) for x in start.split()]
data["loadavg_end"] = [float(x) for x in end.split()]
data["peers_python"] = python
names = {r["name"] for r in data["results"] if r["suite"] == "interop-read"}
if not any(n.startswith("Colonnade decode") for n in names) or not any("(Colonnade, in process)" in r["name"] for r in data["results"]):
    sys.exit("50-interop-read.sh: colonnade-bench skipped a suite (no peers' Python or no zstd/lz4?): no figures written")
with open(dst, "w") as f:
    json.dump(data, f, indent=1, sort_keys=True)
    f.write("\n")
EOF
rm -f "$BENCH_JSON.bench"
