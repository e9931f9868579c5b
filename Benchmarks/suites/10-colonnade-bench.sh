#!/usr/bin/env bash
# colonnade-bench: the in-memory kernels (scan, screens), decode, snapshot, zip, import end to end,
# the CLI on a saved snapshot (cli) and first-touch memory, in one process, into $BENCH_JSON.
set -euo pipefail
"$BENCH_BIN/colonnade-bench" --suite scan,screens,decode,snapshot,zip,import,cli,firsttouch \
    --size "$BENCH_SIZE" --json "$BENCH_JSON"
