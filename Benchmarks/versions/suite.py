#!/usr/bin/env python3
"""Issue 36's benchmark: what a day's write costs in a store, and what a store of appended days
costs its readers, on the generated table of the run's size (Benchmarks/suites/80-versions.sh →
docs/bench/versions.json, rendered by Benchmarks/suites/versions.py).

Whole processes of the release `colonnade`, as a user runs them:

- writes (after the reads, so that their writeback does not run beside them), one run each on a fresh copy of a template store (hard links: the store's files are
  never changed in place), timed from process start to exit, with the bytes the process caused to
  be written to storage (`write_bytes` of /proc/PID/io, read after it exits and before it is
  reaped): a full save of the table (`compact` of the base plus one appended day: every row
  written and synced, the yardstick), `import` of one new day for every ticker into a store of 29
  appended days (30 files), `import` of a day already there (its rows replaced), `compact` of 30
  appended days;
- reads, as interleaved A/B pairs (A B, then B A, …; the ratio taken pair by pair): Q1–Q4 and
  S1–S4 (`filter --count --where Q`) and a load with a one-ticker count, warm and cold (the
  store's files evicted from the page cache before each run, `posix_fadvise(DONTNEED)`), on the
  store of 30 appended days (31 files) against the same store compacted; and `--at-time` the
  version of five appends (a trading week) before the current one against the current one.

    suite.py --bin .build/release/colonnade --base BASE.snapshot --work DIR --json OUT [--pairs 15]
"""
import argparse, datetime, json, os, shutil, statistics, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
import peers  # noqa: E402  (the queries every suite and the page use)
from pagecache import recache, settle  # noqa: E402

QUERIES = [(q, peers.QUERIES[q]) for q in ("Q1", "Q2", "Q3", "Q4", "S1", "S2", "S3", "S4")]
LOAD = "ticker = AAPL"


def run(argv, evict=()):
    """One whole process: wall seconds, CPU seconds (user + system), write_bytes, its output."""
    for path in evict:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    out = os.open(os.devnull, os.O_WRONLY)
    r, w = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.dup2(w, 1)
            os.dup2(out, 2)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    os.close(w)
    os.close(out)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    wall = time.monotonic() - start
    io = {}
    with open("/proc/%d/io" % pid) as f:
        for line in f:
            k, v = line.split(":")
            io[k.strip()] = int(v)
    _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit("suite.py: %s exited with %d" % (" ".join(argv), code))
    return wall, usage.ru_utime + usage.ru_stime, io.get("write_bytes", 0), b"".join(chunks).decode()


def store_files(path):
    """The version log and every data file of the store at `path`."""
    data = path + ".data"
    return [path] + [os.path.join(data, n) for n in sorted(os.listdir(data))]


def fresh_copy(template, name, work):
    """A copy of the store directory `template` whose files are hard links (none is written in place)."""
    target = os.path.join(work, name)
    shutil.rmtree(target, ignore_errors=True)
    subprocess.run(["cp", "-al", template, target], check=True)
    return target


def writes(name, note, runs, prepare, command, settle_each=False):
    """`runs` runs of `command(prepare())`; with `settle_each`, each after the previous one's
    writes reached the disk (a full save writes 2 GB)."""
    rows = []
    for _ in range(runs):
        argv = prepare()
        if settle_each:
            settle()
        wall, cpu, written, _ = run(command(argv))
        rows.append({"wall": wall, "cpu": cpu, "write_bytes": written})
    print("suite.py: %s: median %.1f ms, %d bytes written" % (
        name, statistics.median(r["wall"] for r in rows) * 1e3, statistics.median(r["write_bytes"] for r in rows)), file=sys.stderr)
    return {"name": name, "note": note, "runs": rows}


def pairs(name, note, a, b, count, evict_a=(), evict_b=(), same_answer=True):
    """Interleaved A/B pairs, the order alternating, with both answers checked to be the same
    (unless `same_answer` is false: two versions of a store)."""
    rows = []
    for i in range(count):
        order = [("a", a, evict_a), ("b", b, evict_b)]
        if i % 2:
            order.reverse()
        pair = {}
        for key, argv, evict in order:
            wall, cpu, _, output = run(argv, evict)
            pair[key] = {"wall": wall, "cpu": cpu, "output": output.strip()}
        if same_answer and pair["a"]["output"] != pair["b"]["output"]:
            sys.exit("suite.py: %s: A answered %r, B %r" % (name, pair["a"]["output"], pair["b"]["output"]))
        rows.append({"a_wall": pair["a"]["wall"], "b_wall": pair["b"]["wall"], "a_cpu": pair["a"]["cpu"], "b_cpu": pair["b"]["cpu"]})
    ratio = statistics.median(r["a_wall"] / r["b_wall"] for r in rows)
    print("suite.py: %s: A/B wall %.3f (%d pairs), answer %s" % (name, ratio, count, pair["a"]["output"]), file=sys.stderr)
    return {"name": name, "note": note, "answer": pair["a"]["output"], "pairs": rows}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--base", required=True, help="a single-file snapshot of the generated table")
    p.add_argument("--work", required=True, help="scratch directory, on the base's file system")
    p.add_argument("--json", required=True)
    p.add_argument("--pairs", type=int, default=15)
    p.add_argument("--write-runs", type=int, default=11)
    p.add_argument("--label", default="")
    a = p.parse_args()
    bin, work = os.path.abspath(a.bin), os.path.abspath(a.work)
    load_start = os.getloadavg()[0]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    info = json.loads(run([bin, "info", "--snapshot", a.base, "--format", "json"])[3])
    tickers, rows = info["ticker_count"], info["rows"]
    last = datetime.date.fromisoformat(info["last_date"])
    days = []
    for i in range(1, 33):
        path = os.path.join(work, "day%d.csv" % i)
        start = last + datetime.timedelta(days=7 * i)
        run([bin, "generate", "--tickers", str(tickers), "--days", "1", "--seed", str(100 + i), "--start", start.isoformat(),
             "--csv", path])
        days.append(path)

    def store(name):
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        return d

    def imp(directory, day):
        return [bin, "import", day, "--snapshot", os.path.join(directory, "q.snapshot")]

    # b: the base, then 30 appended days; t1 and t29: b after 1 and after 29 of them. The version
    # five appends before the current one is the one current at the start of a minute: the
    # appends wait for the minute to turn before the sixth-last, and `--at-time` names it.
    b = store("b")
    shutil.copyfile(a.base, os.path.join(b, "q.snapshot"))
    at_time = None
    for i, day in enumerate(days[:30], start=1):
        if i == 26:
            minute = datetime.datetime.now().replace(second=0, microsecond=0)
            while datetime.datetime.now() < minute + datetime.timedelta(minutes=1, seconds=1):
                time.sleep(0.2)
            at_time = (minute + datetime.timedelta(minutes=1)).strftime("%Y-%m-%d %H:%M")
        run(imp(b, day))
        if i == 1:
            subprocess.run(["cp", "-al", b, os.path.join(work, "t1")], check=True)
        if i == 29:
            subprocess.run(["cp", "-al", b, os.path.join(work, "t29")], check=True)
    log = run([bin, "log", "--snapshot", os.path.join(b, "q.snapshot")])[3]
    b_store = os.path.join(b, "q.snapshot")
    c = fresh_copy(b, "c", work)
    c_store = os.path.join(c, "q.snapshot")
    run([bin, "compact", "--snapshot", c_store])
    run([bin, "gc", "--keep", "1", "--snapshot", c_store])  # the compacted store holds one file, like a full save's
    settle()
    recache(store_files(b_store) + store_files(c_store))
    results = {"writes": [], "pairs": []}

    # Reads first, with nothing being written back meanwhile; then the writes.
    def flt(store_path, where, *extra):
        return [bin, "filter", "--snapshot", store_path, *extra, "--count", "--where", where]
    results["pairs"].append(pairs("load, warm", "`filter --count --where '%s'`" % LOAD,
                                  flt(b_store, LOAD), flt(c_store, LOAD), a.pairs))
    results["pairs"].append(pairs("load, cold", "the same, each store's files evicted from the page cache before each run",
                                  flt(b_store, LOAD), flt(c_store, LOAD), max(5, a.pairs // 2),
                                  evict_a=store_files(b_store), evict_b=store_files(c_store)))
    for name, where in QUERIES:
        results["pairs"].append(pairs(name, where, flt(b_store, where), flt(c_store, where), a.pairs))
    results["pairs"].append(pairs(
        "--at-time, five appends back", "Q1 at `--at-time '%s'` (the base and 25 appended days) against the current version "
        "(30 appended days) of the same store" % at_time,
        flt(b_store, QUERIES[0][1], "--at-time", at_time), flt(b_store, QUERIES[0][1]), a.pairs, same_answer=False))

    settle()  # the small writes first, with no writeback of earlier ones running beside them
    results["writes"].append(writes(
        "import of one new day", "%s rows into the store of 29 appended days (30 files)" % format(tickers, ","),
        a.write_runs, lambda: fresh_copy(os.path.join(work, "t29"), "run", work), lambda d: imp(d, days[29])))
    results["writes"].append(writes(
        "import of one day replaced", "the 29th day again into the store of 29 appended days: %s rows replaced" % format(tickers, ","),
        a.write_runs, lambda: fresh_copy(os.path.join(work, "t29"), "run", work), lambda d: imp(d, days[28])))
    results["writes"].append(writes(
        "full save of the table (the yardstick)", "`compact` of the base plus one appended day: every row written and synced",
        3, lambda: fresh_copy(os.path.join(work, "t1"), "run", work),
        lambda d: [bin, "compact", "--snapshot", os.path.join(d, "q.snapshot")], settle_each=True))
    results["writes"].append(writes(
        "compact of 30 appended days", "the store of 30 appended days (31 files) folded into one file", 3,
        lambda: fresh_copy(b, "run", work), lambda d: [bin, "compact", "--snapshot", os.path.join(d, "q.snapshot")],
        settle_each=True))
    shutil.rmtree(os.path.join(work, "run"), ignore_errors=True)
    machine = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": os.environ.get("COLONNADE_COMMIT", "?"), "cores": os.cpu_count(), "size": a.label,
        "rows": rows, "tickers": tickers, "loadAverageStart": load_start, "loadAverageEnd": os.getloadavg()[0],
        "log": "\n".join(log.splitlines()[:4]),
    }
    with open(a.json, "w") as f:
        json.dump({"machine": machine, **results}, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)


main()
