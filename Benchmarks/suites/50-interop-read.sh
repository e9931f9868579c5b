#!/usr/bin/env bash
# Issue 32: Colonnade's in-process decode of Polars' (zstd Parquet), pandas' (LZ4 Feather) and
# DuckDB's (Snappy Parquet) default files beside Polars and DuckDB reading them
# (peers/interop_read.py, run by the suite), and our ZSTD/LZ4 decoders beside `zstd -b`/`lz4 -b`.
set -euo pipefail
COLONNADE_PEERS_PYTHON="$BENCH_ROOT/Benchmarks/peers/.venv/bin/python" \
    "$BENCH_BIN/colonnade-bench" --suite interop-read,codecs --size "$BENCH_SIZE" --json "$BENCH_JSON"
