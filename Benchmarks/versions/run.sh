#!/usr/bin/env bash
# #36's benchmark: appends against a full rewrite, and queries on a store of 30 appended days
# against the same store compacted. Release build; whole-process timings.
#
#   Benchmarks/versions/run.sh                 # 2,000 tickers × 2,500 days (5 M rows)
#   DAYS=10000 Benchmarks/versions/run.sh      # the 20 M-row table
#
# Environment: COLONNADE (the binary, default .build/release/colonnade), OLD_COLONNADE (a binary
# of the single-file format, for the full-rewrite yardstick; skipped when unset), WORK (scratch
# directory), BENCH (a whole-process A/B timer taking `-n N --vs 'B' -- A`, required), BENCH_OPTS
# (more options for it, e.g. a longer time bound).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${COLONNADE:-$PWD/.build/release/colonnade}
OLD=${OLD_COLONNADE:-}
W=${WORK:-/tmp/colonnade-versions-bench}
T=2000
D=${DAYS:-2500}
PAIRS=${PAIRS:-15}
IO="python3 $PWD/Benchmarks/versions/write_bytes.py"
: "${BENCH:?set BENCH to a whole-process A/B timer (e.g. one taking -n N --vs B -- A)}"

# BASE: an existing snapshot of `generate --tickers 2000 --days $DAYS --seed 1` to start from.
if [ -n "${BASE:-}" ]; then mv "$BASE" /tmp/colonnade-versions-base.$$; fi
rm -rf "$W"; mkdir -p "$W"/{single,a,b,c}
echo "load at start: $(uptime)"
if [ -n "${BASE:-}" ]; then mv /tmp/colonnade-versions-base.$$ "$W/base.snapshot"
else "$BIN" generate --tickers $T --days "$D" --seed 1 --snapshot "$W/base.snapshot" 2>/dev/null; fi
last=$("$BIN" info --snapshot "$W/base.snapshot" --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["last_date"])')
for i in $(seq 1 32); do
    day=$(date -d "$last + $((7 * i)) days" +%F)
    "$BIN" generate --tickers $T --days 1 --seed $((100 + i)) --start "$day" --csv "$W/day$i.csv" 2>/dev/null
done
echo "base: $T tickers × $D days; each day file: $(wc -c < "$W/day1.csv") bytes, $T rows"

echo "== one day into the snapshot: bytes written (write_bytes from /proc/PID/io) and wall time, one run each"
cp "$W/base.snapshot" "$W/single/q.snapshot"; cp "$W/base.snapshot" "$W/a/q.snapshot"
if [ -n "$OLD" ]; then
    echo "-- single-file rewrite (the old path: load, upsert, save the whole snapshot)"
    $IO "$OLD" import "$W/day1.csv" --snapshot "$W/single/q.snapshot"
    $IO "$OLD" import "$W/day1.csv" --snapshot "$W/single/q.snapshot"   # the same day again: replaced
fi
echo "-- store: the first write upgrades the single file (a hard link), then one segment per import"
$IO "$BIN" import "$W/day1.csv" --snapshot "$W/a/q.snapshot"
$IO "$BIN" import "$W/day2.csv" --snapshot "$W/a/q.snapshot"
$IO "$BIN" import "$W/day2.csv" --snapshot "$W/a/q.snapshot"   # the same day again: replaced
$IO "$BIN" compact --snapshot "$W/a/q.snapshot"

if [ -n "$OLD" ]; then
    echo "== import of one new day, A/B pairs: store append (A) against the single-file rewrite (B)"
    $BENCH ${BENCH_OPTS:-} -n 5 --vs "$OLD import $W/day3.csv --snapshot $W/single/q.snapshot" -- "$BIN" import "$W/day3.csv" --snapshot "$W/a/q.snapshot"
fi

echo "== a store with 30 appended days (b) and the same store compacted (c)"
cp "$W/base.snapshot" "$W/b/q.snapshot"
for i in $(seq 1 30); do "$BIN" import "$W/day$i.csv" --snapshot "$W/b/q.snapshot" >/dev/null 2>&1; done
cp -a "$W/b/." "$W/c/"
"$BIN" compact --snapshot "$W/c/q.snapshot"
"$BIN" log --snapshot "$W/b/q.snapshot" | head -4
du -sh "$W/b" "$W/c"

for query in "80 < high < 83" \
             "80 < high < 83 and 78 < low < 82 and 75 < adj_high < 85 and 70 < adj_low < 75" \
             "(close < 20 or close > 500) and not volume < 500000" \
             "open > 1.03 * prev(close)" \
             "close > mavg(close, 50) and mavg(close, 50) > mavg(close, 200)"; do
    echo "== filter --count --where '$query': 30 appended days (A) against compacted (B)"
    $BENCH ${BENCH_OPTS:-} -n "$PAIRS" --vs "$BIN filter --snapshot $W/c/q.snapshot --count --where '$query'" -- \
        "$BIN" filter --snapshot "$W/b/q.snapshot" --count --where "$query"
done
echo "== --at-version 2 (one appended day) against the current version of the same store"
$BENCH ${BENCH_OPTS:-} -n "$PAIRS" --vs "$BIN filter --snapshot $W/b/q.snapshot --count --where '80 < high < 83'" -- \
    "$BIN" filter --snapshot "$W/b/q.snapshot" --at-version 2 --count --where "80 < high < 83"
echo "load at end: $(uptime)"
