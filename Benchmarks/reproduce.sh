#!/usr/bin/env bash
# Every figure and chart in docs/BENCHMARKS.md, with one command:
#
#   Benchmarks/reproduce.sh [--size small|medium|large] [--repeat R] [--attempts N] [--suite a,b [--update-page | --out DIR]]
#
# 1. Builds colonnade and colonnade-bench (release).
# 2. Runs every suite hook Benchmarks/suites/NN-NAME.sh in order (colonnade-bench, peers, ingest,
#    interop, and any other engineer's suite); each writes NAME.json. A suite is run again, up to
#    --attempts times in all (default 2), when the machine was not quiet for it: the 1-minute load
#    average at its start exceeded its thread count (the usable cores), or other processes used
#    more than a quarter of a core on average while it ran (the CPU time /proc/stat counts as busy,
#    less the suite's own processes' CPU time, over its wall time). Before each suite the script
#    waits (at most 3 minutes) for the load average to fall to the thread count less half a core,
#    so the suite before's own threads are not counted against it. The load average at its end is
#    recorded but not judged: it counts the suite's own threads. A suite still loaded is marked
#    "loaded" on the page.
#    A suite that fails stops the run (exit status 1) with its error: no figure of a failed run.
# 3. A full run (no --suite) writes into docs/bench/: the JSON, run.json (what ran, with the load
#    averages), the charts redrawn from that JSON (report.py --draw-charts), and docs/BENCHMARKS.md.
#    --suite a,b runs only those, into --out DIR (default .build/bench-partial), and leaves the
#    page alone: subsets are for iterating. With --update-page a subset replaces only its own
#    suites' JSON in docs/bench/ and their rows of run.json (each refreshed row carries its own
#    commit and end time, which the page shows beside the full run's), then renders the page: a
#    full run takes about 2 h 45 min at large, a suite 5 to 30 min. The size must be the page's.
# The page's size is large (20 M rows: the memory-bound figures need a column ≥ 4× the L3 cache);
# run it on a quiet machine.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
size=large repeat=10 attempts=2 only="" out="" update_page=false
die() { echo "reproduce.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
    case "$1" in
        --size) size="${2:?--size needs a value}"; shift 2 ;;
        --repeat) repeat="${2:?--repeat needs a value}"; shift 2 ;;
        --attempts) attempts="${2:?--attempts needs a value}"; shift 2 ;;
        --suite) only="${2:?--suite needs a list}"; shift 2 ;;
        --out) out="${2:?--out needs a directory}"; shift 2 ;;
        --update-page) update_page=true; shift ;;
        -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option '$1'" ;;
    esac
done
case "$size" in small|medium|large) ;; *) die "unknown size '$size' (small, medium, large)" ;; esac
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || die "--repeat needs a positive integer"
[[ "$attempts" =~ ^[1-9][0-9]*$ ]] || die "--attempts needs a positive integer"

# The hooks, in order; NAME is the file name without its NN- prefix.
hooks=()
names=()
for hook in "$here"/suites/*.sh; do
    base="$(basename "$hook" .sh)"
    name="${base#[0-9][0-9]-}"
    hooks+=("$hook")
    names+=("$name")
done
if [ -n "$only" ]; then
    IFS=, read -r -a wanted <<< "$only"
    for w in "${wanted[@]}"; do
        printf '%s\n' "${names[@]}" | grep -qx "$w" || die "no suite '$w' (suites: ${names[*]})"
    done
    if $update_page; then
        [ -z "$out" ] || die "--update-page writes docs/bench/: leave out --out"
        page_size="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["size"])' "$root/docs/bench/run.json")" \
            || die "--update-page needs docs/bench/run.json (a full run makes it)"
        [ "$page_size" = "$size" ] || die "the page is at size $page_size; --update-page needs --size $page_size"
        out="$root/docs/bench"
    fi
    out="${out:-$root/.build/bench-partial}"
else
    ! $update_page || die "--update-page is for --suite runs: a full run rewrites the page anyway"
    [ -z "$out" ] || die "--out is for --suite runs: a full run writes docs/bench/"
    out="$root/docs/bench"
fi
mkdir -p "$out"
cd "$root"
threads="$(nproc)"
loadavg() { cut -d' ' -f1 /proc/loadavg; }
# CPU seconds the kernel counts as busy (user, nice, system, irq, softirq; not idle, iowait, steal).
busy() { awk -v hz="$(getconf CLK_TCK)" '/^cpu / { printf "%.2f", ($2 + $3 + $4 + $7 + $8) / hz; exit }' /proc/stat; }
# Waits, at most 3 minutes, for the 1-minute load average to fall to the thread count less half a
# core: the suite before leaves its own threads in it for a minute or so (the large run of
# 2026-11-29 started interop at 2.15 right after ingest's two threads, on an otherwise idle machine).
settle() {
    local waited=0
    while [ "$waited" -lt 180 ] && awk -v l="$(loadavg)" -v t="$threads" 'BEGIN { exit !(l > t - 0.5) }'; do
        sleep 5
        waited=$((waited + 5))
    done
}
echo "reproduce.sh: size $size, $threads threads, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
swift build -c release --product colonnade >&2
swift build -c release --product colonnade-transfer >&2   # fetch runs its requests in it
swift build -c release --product colonnade-bench >&2
bin="$(swift build -c release --show-bin-path)"
commit="$(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD -- Sources Benchmarks Package.swift || echo +dirty)"
started="$(date -u +%Y-%m-%dT%H:%M:%SZ)"

# Each hook's environment: what to run and where its JSON goes.
export BENCH_SIZE="$size" BENCH_REPEAT="$repeat" BENCH_BIN="$bin" BENCH_ROOT="$root" COLONNADE_COMMIT="$commit"
records="$(mktemp)"
own="$(mktemp)"
trap 'rm -f "$records" "$own"' EXIT
for i in "${!hooks[@]}"; do
    name="${names[$i]}"
    if [ -n "$only" ] && ! printf '%s\n' "${wanted[@]}" | grep -qx "$name"; then continue; fi
    attempt=0
    while :; do
        attempt=$((attempt + 1))
        settle
        l0="$(loadavg)"
        t0="$(date +%s.%N)"
        b0="$(busy)"
        echo "reproduce.sh: suite $name, attempt $attempt, load average $l0" >&2
        # The hook runs under a Python parent that writes the CPU seconds of the hook and every
        # process it waited for (RUSAGE_CHILDREN) to $own.
        if ! BENCH_JSON="$out/$name.json.tmp" python3 -c '
import resource, subprocess, sys
code = subprocess.run(sys.argv[2:]).returncode
u = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%.2f" % (u.ru_utime + u.ru_stime))
sys.exit(code)' "$own" "${hooks[$i]}"; then
            rm -f "$out/$name.json.tmp"
            echo "reproduce.sh: suite $name failed (see its error above): no figures written" >&2
            exit 1
        fi
        [ -s "$out/$name.json.tmp" ] || { echo "reproduce.sh: suite $name wrote no $name.json" >&2; exit 1; }
        l1="$(loadavg)"
        b1="$(busy)"
        t1="$(date +%s.%N)"
        # Cores other processes used on average while the suite ran (never below 0: the two
        # counts are sampled at slightly different moments), whether that or the start's load
        # makes the suite loaded, and its seconds.
        read -r others loaded seconds < <(python3 -c "
import sys
b0, b1, own, t0, t1, l0, threads = map(float, sys.argv[1:])
others = max(0.0, (b1 - b0 - own) / max(t1 - t0, 1e-3))
print('%.2f %s %.0f' % (others, 'true' if l0 > threads or others > 0.25 else 'false', t1 - t0))" \
            "$b0" "$b1" "$(cat "$own")" "$t0" "$t1" "$l0" "$threads")
        if [ "$loaded" = false ] || [ "$attempt" -ge "$attempts" ]; then break; fi
        echo "reproduce.sh: suite $name ran at load average $l0 (start), other processes using $others cores on average: running it again" >&2
    done
    mv "$out/$name.json.tmp" "$out/$name.json"
    printf '{"name": "%s", "attempts": %d, "load_start": %s, "load_end": %s, "other_cores": %s, "seconds": %s, "threads": %d, "loaded": %s, "commit": "%s", "ended": "%s"}\n' \
        "$name" "$attempt" "$l0" "$l1" "$others" "$seconds" "$threads" "$loaded" "$commit" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >> "$records"
done
if $update_page; then
    # Replace the refreshed suites' rows of the page's run.json; every other row, and the full
    # run's own commit and times, stay as they were.
    python3 - "$records" "$out/run.json" <<'EOF'
import json, os, sys
records, path = sys.argv[1:]
fresh = {r["name"]: dict(r, refreshed=True) for r in (json.loads(l) for l in open(records) if l.strip())}
with open(path) as f:
    run = json.load(f)
names = [r["name"] for r in run["suites"]]
run["suites"] = [fresh.get(r["name"], r) for r in run["suites"]] + [r for n, r in fresh.items() if n not in names]
with open(path + ".tmp", "w") as f:
    json.dump(run, f, indent=1)
    f.write("\n")
os.replace(path + ".tmp", path)
EOF
    if printf '%s\n' "${wanted[@]}" | grep -qx colonnade-bench; then
        python3 "$here/report.py" --draw-charts "$bin/colonnade-bench"
    else
        python3 "$here/report.py"
    fi
    python3 "$here/report.py" --check
    echo "reproduce.sh: --update-page: $only refreshed in docs/bench and docs/BENCHMARKS.md; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    exit 0
fi
python3 - "$records" "$out/run.json" "$size" "$commit" "$started" "$threads" <<'EOF'
import json, sys
records, path, size, commit, started, threads = sys.argv[1:]
import datetime
cpu = "unknown"
with open("/proc/cpuinfo") as f:
    for line in f:
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
suites = [json.loads(l) for l in open(records) if l.strip()]
run = dict(size=size, commit=commit, started=started,
           ended=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           cores=int(threads), cpu=cpu, suites=suites)
with open(path, "w") as f:
    json.dump(run, f, indent=1)
    f.write("\n")
EOF
if [ -n "$only" ]; then
    echo "reproduce.sh: --suite run: JSON in $out; docs/BENCHMARKS.md not rewritten (only a full run rewrites it)" >&2
    exit 0
fi
python3 "$here/report.py" --draw-charts "$bin/colonnade-bench"
python3 "$here/report.py" --check
echo "reproduce.sh: done; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
