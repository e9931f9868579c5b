#!/usr/bin/env bash
# Rewrites the golden chart SVGs (Tests/Fixtures/charts/NAME.svg) from goldens.tsv with the
# `colonnade` built from this checkout, after a deliberate change to the charts. ChartTests
# only compares; it never writes them. Look at every rewritten SVG before committing it.
#
#   Tests/Fixtures/charts/regenerate.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
cd "$root"
swift build --product colonnade
bin="$(swift build --show-bin-path)/colonnade"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
snapshot="$scratch/wiki.snapshot"
# The same snapshot ChartTests.fixtureSnapshot imports.
"$bin" import Tests/Fixtures/quandl/WIKI-KO.asc.csv --ticker KO --snapshot "$snapshot" >/dev/null
"$bin" import Tests/Fixtures/quandl/WIKI-AAPL.asc.csv --ticker AAPL --snapshot "$snapshot" >/dev/null
while IFS=$'\t' read -r -a fields; do
    [ "${#fields[@]}" -gt 0 ] || continue
    case "${fields[0]}" in '#'*) continue ;; esac
    name="${fields[0]}"
    env -i PATH="$PATH" "$bin" chart "${fields[@]:1}" --snapshot "$snapshot" > "$scratch/$name.svg"
    if cmp -s "$scratch/$name.svg" "$here/$name.svg"; then
        echo "$name.svg: unchanged"
    else
        mv "$scratch/$name.svg" "$here/$name.svg"
        echo "$name.svg: rewritten"
    fi
done < "$here/goldens.tsv"
