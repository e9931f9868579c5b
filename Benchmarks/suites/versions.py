"""Issue 36's figures (Benchmarks/suites/80-versions.sh → docs/bench/versions.json, made by
Benchmarks/versions/suite.py), rendered by report.py: every median, ratio and verdict is computed
here from the runs in the JSON, none is typed."""
import statistics


def section(data):
    m = data["machine"]
    busy = max(m.get("loadAverageStart") or 0, m.get("loadAverageEnd") or 0)

    def ms(seconds):
        return "%.1f ms" % (seconds * 1e3) if seconds < 1 else "%.2f s" % seconds

    out = ["`Benchmarks/versions/suite.py` on the generated %s table (%s rows, %s tickers) at commit %s, %s, %d cores; "
           "load average %.2f at the start, %.2f at the end. Release `colonnade`, whole processes (start to exit, as a "
           "user runs them); warm page cache unless a row says cold." % (
               m["size"], format(m["rows"], ","), format(m["tickers"], ","), m["commit"], m["date"], m["cores"],
               m["loadAverageStart"], m["loadAverageEnd"])]
    if busy > m["cores"]:
        out.append("**Loaded**: the load average exceeded the %d cores; the spreads are wide." % m["cores"])
    writes = {w["name"]: w for w in data["writes"]}
    out += ["", "Writes, each run on a fresh copy of the store (hard links; a store's files are never written in place). "
            "Bytes written: the process's `write_bytes` from /proc/PID/io, read after it exits and before it is reaped.", "",
            "| write | what | runs | median | min – max | bytes written (median) | target | |",
            "|---|---|---:|---:|---:|---:|---|---|"]
    for w in data["writes"]:
        walls = [r["wall"] for r in w["runs"]]
        written = statistics.median(r["write_bytes"] for r in w["runs"])
        target, verdict = "", ""
        if w["name"] == "import of one new day":
            met = statistics.median(walls) < 0.050 and written < 2 * 1024 * 1024
            target, verdict = "< 50 ms, < 2 MB", "met" if met else "**not met**"
        out.append("| %s | %s | %d | %s | %s – %s | %s | %s | %s |" % (
            w["name"], w["note"], len(walls), ms(statistics.median(walls)), ms(min(walls)), ms(max(walls)),
            format(int(written), ","), target, verdict))
    yardstick = writes.get("full save of the table (the yardstick)")
    append = writes.get("import of one new day")
    if yardstick and append:
        y = statistics.median(r["wall"] for r in yardstick["runs"])
        x = statistics.median(r["wall"] for r in append["runs"])
        yb = statistics.median(r["write_bytes"] for r in yardstick["runs"])
        xb = statistics.median(r["write_bytes"] for r in append["runs"])
        out += ["", "An appended day costs %.1f %% of a full save's time and %.3f %% of its bytes." % (100 * x / y, 100 * xb / yb)]
    out += ["", "Reads: A against B in interleaved pairs (A B, then B A, …), the ratio taken pair by pair; medians, the "
            "ratio's min – max. A is the store of 30 appended days (31 files), B the same store compacted (one file), "
            "unless the row says otherwise; both answered the same count in every pair (but the `--at-time` row's two "
            "versions).", "",
            "| read | what | pairs | A | B | A/B wall | min – max | A/B CPU | target | |",
            "|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for p in data["pairs"]:
        rows = p["pairs"]
        ratio = [r["a_wall"] / r["b_wall"] for r in rows]
        cpu = statistics.median(r["a_cpu"] / r["b_cpu"] for r in rows)
        med = statistics.median(ratio)
        out.append("| %s | %s | %d | %s | %s | %.3f | %.2f – %.2f | %.3f | ≤ 1.10 | %s |" % (
            p["name"], p["note"].replace("|", "\\|"), len(rows), ms(statistics.median(r["a_wall"] for r in rows)),
            ms(statistics.median(r["b_wall"] for r in rows)), med, min(ratio), max(ratio), cpu,
            "met" if med <= 1.10 else "**not met**"))
    out += ["", "The store's log (`colonnade log`, first lines):", "", "```", m["log"], "```"]
    return "\n".join(out)
