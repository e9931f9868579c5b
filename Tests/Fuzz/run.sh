#!/usr/bin/env bash
# Tests/Fuzz/run.sh TARGET|all SECONDS [libFuzzer flags…]
#
# Builds Tests/Fuzz/Targets/TARGET.swift (Tests/Fuzz/build.sh: -O, -sanitize=fuzzer,address) and
# runs it for SECONDS on its committed seed corpus Tests/Fuzz/Corpus/TARGET. `all` runs every
# target, one after the other, SECONDS each. New interesting inputs go to
# .build/fuzz/work/TARGET/corpus (not committed; copy the ones worth keeping into the seed corpus),
# crashes, timeouts, leaks and OOMs to .build/fuzz/findings/TARGET. Prints executions, exec/s,
# coverage and findings; exits 1 when something was found. One worker, lowest CPU priority
# (nice 19): the machine is shared.
#
# Reproduce a finding: .build/fuzz/bin/TARGET .build/fuzz/findings/TARGET/crash-…
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ $# -lt 2 ]; then
    echo "usage: Tests/Fuzz/run.sh TARGET|all SECONDS [libFuzzer flags…]   targets: $(cd Tests/Fuzz/Targets && ls *.swift | sed 's/\.swift$//' | tr '\n' ' ')" >&2
    exit 2
fi
target=$1 seconds=$2
shift 2

if [ "$target" = all ]; then
    failed=()
    for f in Tests/Fuzz/Targets/*.swift; do
        name=$(basename "$f" .swift)
        "$0" "$name" "$seconds" "$@" || failed+=("$name")
    done
    if [ ${#failed[@]} -gt 0 ]; then
        echo "fuzz: findings or failures in: ${failed[*]}" >&2
        exit 1
    fi
    exit 0
fi

# The build runs at normal priority, like everyone's swift build; the fuzzing itself at nice 19.
Tests/Fuzz/build.sh "$target"

seeds=Tests/Fuzz/Corpus/$target
work=.build/fuzz/work/$target
findings=.build/fuzz/findings/$target
mkdir -p "$seeds" "$work/corpus" "$findings"
log=$work/fuzz-$(date -u +%Y%m%dT%H%M%SZ).log

# Per-target options: Tests/Fuzz/Corpus/TARGET.options holds extra libFuzzer flags, one per line
# (e.g. -max_len=65536 for targets whose seeds are larger than libFuzzer's default).
options=()
if [ -f "Tests/Fuzz/Corpus/$target.options" ]; then
    while IFS= read -r line; do [ -n "$line" ] && [ "${line#\#}" = "$line" ] && options+=("$line"); done <"Tests/Fuzz/Corpus/$target.options"
fi
[ -f "Tests/Fuzz/Dictionaries/$target.dict" ] && options+=("-dict=Tests/Fuzz/Dictionaries/$target.dict")

before=$(find "$findings" -type f | wc -l)
echo "fuzz: $target for ${seconds}s, seeds $seeds ($(find "$seeds" -type f | wc -l) files), log $log"
set +e
# detect_leaks: LeakSanitizer reports leaks at exit and after each input that grows memory.
# The corpus directory written to comes first; the committed seeds are read only.
# SWIFT_BACKTRACE: the runtime's own crash handler trips ASan (it reads the stack raw); the fatal
# error message and ASan's stack trace say what is needed.
SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=no} ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
nice -n 19 ".build/fuzz/bin/$target" "$work/corpus" "$seeds" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$findings/" "${options[@]}" "$@" >"$log" 2>&1
status=$?
set -e

after=$(find "$findings" -type f | wc -l)
stats() { sed -n "s/^stat::$1: *//p" "$log" | tail -n 1; }
last=$(grep -E '^#[0-9]+' "$log" | grep -E 'cov:' | tail -n 1 || true)
runs=$(stats number_of_executed_units)
rate=$(stats average_exec_per_sec)
echo "fuzz: $target: ${runs:-?} executions, ${rate:-?} exec/s, last status: ${last:-none}"
echo "fuzz: $target: $((after - before)) new finding(s) in $findings (libFuzzer exit $status)"
if [ "$status" -ne 0 ] || [ "$after" -gt "$before" ]; then
    grep -E "ERROR: |Fatal error|SUMMARY|Test unit written|deadly signal|==[0-9]+==" "$log" | head -n 20
    exit 1
fi
