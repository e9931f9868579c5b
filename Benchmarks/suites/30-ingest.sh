#!/usr/bin/env bash
# `colonnade import` beside the peers' readers, whole processes, each side's start-up measured.
set -euo pipefail
"$BENCH_ROOT/Benchmarks/peers/ingest.sh" --no-build --size "$BENCH_SIZE" --repeat 3 --threads 1,2 --json "$BENCH_JSON"
