#!/usr/bin/env bash
# Regenerates snapshots/sample.snapshot, the golden file SnapshotGoldenTests checks, with the CLI:
# 20 tickers × 2,520 days, seed 42 (the parameters of SnapshotGoldenTests.generator).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
swift build -c release --product colonnade
bin="$(swift build -c release --show-bin-path)/colonnade"
tmp="$(mktemp "$root/snapshots/.sample.XXXXXX")"
trap 'rm -f "$tmp" "$tmp.lock"' EXIT  # and the lock file beside the temporary name
rm -f "$tmp"
"$bin" generate --tickers 20 --days 2520 --seed 42 --snapshot "$tmp"
if cmp -s "$tmp" snapshots/sample.snapshot; then
    echo "regenerate-sample.sh: snapshots/sample.snapshot is unchanged (identical bytes)"
else
    mv "$tmp" snapshots/sample.snapshot
    echo "regenerate-sample.sh: wrote snapshots/sample.snapshot (changed); commit it with: git add -f snapshots/sample.snapshot"
fi
