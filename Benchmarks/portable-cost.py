"""What `-target-cpu native` buys the CLI (issue 29): the same queries through two `colonnade`
builds on one snapshot, interleaved, the query alone as the CLI times it (`--timing`'s `query_ms`,
the median of its `--repeat` runs after a warm-up) and the whole process, start to answer.

    COLONNADE_PORTABLE=1 swift build -c release --scratch-path /tmp/portable-build --product colonnade
    python3 Benchmarks/portable-cost.py .build/release/colonnade /tmp/portable-build/release/colonnade SNAPSHOT

The first binary is the native build (this package's default), the second the portable one (what
a package that depends on Colonnade gets, or `COLONNADE_PORTABLE=1`). Queries: Q1–Q4 and S1–S4 of
the benchmark suites, at 1 thread and at every core. Each round runs every query on both builds,
the order of the two alternating from round to round; a query's counts must agree. Prints, per
query, each build's median query_ms and whole-process seconds over the rounds, and portable ÷
native (above 1: native is faster).
"""

import json
import os
import statistics
import subprocess
import sys
import time

QUERIES = [
    ("Q1", "80 < high < 83"),
    ("Q2", "80 < high < 83 and 78 < low < 82 and 75 < adj_high < 85 and 70 < adj_low < 75"),
    ("Q3", "ticker in (AAPL, MSFT, AMZN, GOOG, FB, FDX, KO, ORCL, IBM, INTC) and 2005-01-01 <= date <= 2014-05-10 "
           "and volume > 1000000 and 20 < close < 200"),
    ("Q4", "(close < 20 or close > 500) and not volume < 500000"),
    ("S1", "open > 1.03 * prev(close)"),
    ("S2", "(high - low) / close > 0.05 and volume > 2 * mavg(volume, 20)"),
    ("S3", "close > mavg(close, 50) and mavg(close, 50) > mavg(close, 200)"),
    ("S4", "high >= mmax(high, 252)"),
]


def run(binary, snapshot, text, threads, repeat):
    argv = [binary, "filter", "--snapshot", snapshot, "--where", text, "--count", "--threads", str(threads),
            "--timing", "--repeat", str(repeat)]
    started = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if p.returncode != 0:
        sys.exit("portable-cost.py: %s failed (exit status %d): %s" % (" ".join(argv[:4]), p.returncode, p.stderr.strip()))
    timing = json.loads(p.stderr.strip().splitlines()[-1])
    return int(p.stdout.strip().replace(",", "")), timing["query_ms"], wall


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    native, portable, snapshot = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    repeat = 9
    cores = os.cpu_count() or 1
    load = [os.getloadavg()[0]]
    results = {}
    for r in range(rounds):
        for name, text in QUERIES:
            for threads in sorted({1, cores}):
                order = [("native", native), ("portable", portable)]
                if r % 2:
                    order.reverse()
                for which, binary in order:
                    count, query_ms, wall = run(binary, snapshot, text, threads, repeat)
                    results.setdefault((name, threads), {}).setdefault(which, []).append((count, query_ms, wall))
    load.append(os.getloadavg()[0])
    print("native %s vs portable %s on %s, %d rounds (query_ms: median of %d runs each); load %.2f -> %.2f"
          % (native, portable, snapshot, rounds, repeat, load[0], load[1]))
    print("%-4s %2s  %12s %12s %8s   %10s %10s %8s" % ("", "t", "native ms", "portable ms", "p ÷ n", "native s", "portable s", "p ÷ n"))
    ratios = []
    for (name, threads), by in sorted(results.items()):
        counts = {c for runs in by.values() for c, _, _ in runs}
        if len(counts) != 1:
            sys.exit("portable-cost.py: %s t=%d: the builds' counts differ: %s" % (name, threads, sorted(counts)))
        nq = statistics.median(q for _, q, _ in by["native"])
        pq = statistics.median(q for _, q, _ in by["portable"])
        nw = statistics.median(w for _, _, w in by["native"])
        pw = statistics.median(w for _, _, w in by["portable"])
        ratios.append(pq / nq)
        print("%-4s %2d  %12.3f %12.3f %7.2f×   %10.3f %10.3f %7.2f×" % (name, threads, nq, pq, pq / nq, nw, pw, pw / nw))
    print("query_ms portable ÷ native: geometric mean %.3f×, range %.2f×–%.2f×"
          % (statistics.geometric_mean(ratios), min(ratios), max(ratios)))


if __name__ == "__main__":
    main()
