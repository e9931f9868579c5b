# Sourced by run.sh, ingest.sh, interop.sh and the suites that use the generated table (needs
# $here and $root set).
#
# The generated inputs in .data/ are made once and reused, so a change to the generator would
# otherwise leave every later run measuring the old data (as happened when the generator's
# overnight gaps changed). `.data/GENERATOR` records a hash of the generator's sources and of
# the writers that turn its rows into CSV and JSON; when it differs from the current sources,
# every generated input is deleted and made again. Results (`last-*.md`) are kept.

generator_key() {
    cat "$root"/Sources/Colonnade/Synthetic/*.swift \
        "$root"/Sources/DataLinkFormat/QuoteGenerator+Writers.swift | sha256sum | cut -c1-16
}

# Deletes .data's generated inputs unless they were made by the current generator.
refresh_generated_data() {
    local data="$here/.data" key stamp=""
    key="$(generator_key)"
    mkdir -p "$data"
    [ -f "$data/GENERATOR" ] && stamp="$(cat "$data/GENERATOR")"
    if [ "$stamp" != "$key" ]; then
        if compgen -G "$data/*-seed*" >/dev/null || compgen -G "$data/ingest-*" >/dev/null; then
            echo "$(basename "$0"): the generator changed (${stamp:-no stamp} → $key); generating the data again" >&2
        fi
        rm -rf "$data"/*-seed* "$data"/ingest-*
        echo "$key" > "$data/GENERATOR.tmp" && mv "$data/GENERATOR.tmp" "$data/GENERATOR"
    fi
}

# Makes .data/$size-seed42.snapshot with the colonnade binary $1 unless it is there (written
# under a temporary name, then renamed); needs `tickers`, `days`, `size` and `die` set.
generated_snapshot() {
    local base="$here/.data/$size-seed42"
    mkdir -p "$here/.data"
    [ -f "$base.snapshot" ] && return 0
    rm -f "$base.tmp.snapshot"
    "$1" generate --tickers "$tickers" --days "$days" --seed 42 --snapshot "$base.tmp.snapshot" >&2 \
        || die "colonnade generate --snapshot failed"
    mv "$base.tmp.snapshot" "$base.snapshot"
    rm -f "$base.tmp.snapshot.lock"  # the lock file of the temporary name
}

# For a suite run by reproduce.sh (Benchmarks/suites/*.sh, with common.sh sourced too): the
# generated table of $BENCH_SIZE, refreshed if the generator changed and made with
# $BENCH_BIN/colonnade unless it is there; sets `tickers`, `days` and `size`.
suite_generated_snapshot() {
    peers_dimensions "$BENCH_SIZE"
    refresh_generated_data
    size="$BENCH_SIZE"
    generated_snapshot "$BENCH_BIN/colonnade"
}
