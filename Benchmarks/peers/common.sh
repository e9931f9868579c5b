# Shared by the peers scripts, which source it after defining `here`, `root` and `die`: the sizes,
# the venv check and the release build, said once.

# Sets `tickers` and `days` for size $1: the generated table at small, medium or large.
peers_dimensions() {
    case "$1" in
        small) tickers=100 days=2520 ;;
        medium) tickers=1000 days=5000 ;;
        large) tickers=2000 days=10000 ;;
        *) die "unknown size '$1' (small, medium, large)" ;;
    esac
}

# Sets `venv` to the peers' virtual environment, which must exist (Benchmarks/peers/run.sh makes it).
peers_venv() {
    venv="$here/.venv"
    [ -x "$venv/bin/python" ] || die "no virtual environment at $venv (run Benchmarks/peers/run.sh once)"
}

# Builds the release colonnade, colonnade-transfer (fetch runs its requests in it) and colonnade-bench.
peers_build() {
    (cd "$root" && swift build -c release --product colonnade >&2 && swift build -c release --product colonnade-transfer >&2 \
        && swift build -c release --product colonnade-bench >&2) \
        || die "swift build failed"
}
