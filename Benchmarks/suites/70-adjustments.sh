#!/usr/bin/env bash
# Issue 33: verify --adjustments beside verify, adjust beside a plain save, and fetch --update's
# work after its downloads with one split among every ticker beside none (the recomputing path),
# in process on the bench table (Benchmarks/ColonnadeBenchmarks/AdjustmentSuite.swift).
set -euo pipefail
"$BENCH_BIN/colonnade-bench" --suite adjustments --size "$BENCH_SIZE" --json "$BENCH_JSON"
