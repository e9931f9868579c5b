"""The indicators suite's section of docs/BENCHMARKS.md (Benchmarks/suites/70-indicators.sh writes
docs/bench/indicators.json with Benchmarks/peers/indicators.py). Every figure comes from `data`."""

LABELS = {"colonnade": "Colonnade", "polars": "Polars", "talib": "TA-Lib", "duckdb": "DuckDB"}


def _run(data, engine, query, threads):
    for r in data["results"]:
        if r["engine"] != engine:
            continue
        for run in r["runs"]:
            if run["query"] == query and run["threads"] == threads:
                return run
    return None


def section(data):
    results = data["results"]
    queries = data["queries"]
    lines = ["`Benchmarks/peers/indicators.sh --size %s`, %s; load average (1 min) %s at the start, %s at the end "
             "(the machine is shared: compare rows of one run with each other)." % (
                 data["size"], data["started"], data["load_start"], data["load_end"]), ""]
    lines.append("Engines: " + "; ".join("%s %s (%s)" % (LABELS[r["engine"]], r["version"], r.get("note", ""))
                                          for r in results) + ".")
    lines.append("")
    cols = []
    for r in results:
        for t in sorted({run["threads"] for run in r["runs"]}):
            cols.append((r["engine"], t))
    lines.append("| query | matched | " + " | ".join("%s t=%d" % (LABELS[e], t) for e, t in cols)
                 + " | Polars ÷ Colonnade (same threads) |")
    lines.append("|---|---:|" + "---:|" * len(cols) + "---|")
    verdicts = []
    notes = []
    for q in queries:
        runs = [_run(data, e, q, t) for e, t in cols]
        known = [r for r in runs if r]
        if not known:
            continue
        ratios = []
        for t in sorted({t for _, t in cols}):
            c, p = _run(data, "colonnade", q, t), _run(data, "polars", q, t)
            if c and p and c["ms"] > 0:
                ratios.append("%.1f× (t=%d)" % (p["ms"] / c["ms"], t))
                if q.startswith("I") and not q.endswith("L"):
                    verdicts.append((q, t, p["ms"] / c["ms"]))
        lines.append("| %s `%s`%s | %s | %s | %s |" % (
            q, queries[q], " --on latest" if q.endswith("L") else "", format(known[0]["result"][0], ","),
            " | ".join(("%.3g ms" % r["ms"] + (" (%s)" % format(r["result"][0], ",") if r["result"][0] != known[0]["result"][0] else ""))
                       if r else "—" for r in runs), ", ".join(ratios) or "—"))
        exact = next((r["exact"] for r in known if "exact" in r), None)
        if exact:
            notes.append("%s: the exact answer (DuckDB in DECIMAL(38, 8)) is %s matches, %s if decimal ties counted; "
                         "an engine's own count is shown in parentheses where it differs from the first column's."
                         % (q, format(exact[0][0], ","), format(exact[1][0], ",")))
    lines.append("")
    lines += notes
    if notes:
        lines.append("")
    lines.append("Answers: %s." % ("every engine agrees on every count (and sum(close) within 1e-9), S3's within its exact bounds" if data["agree"]
                                   else "**MISMATCH**: " + "; ".join(data["mismatches"])))
    if verdicts:
        met = [v for v in verdicts if v[2] >= 5]
        lines.append("Target (every indicator screen at least 5× Polars, same thread count): %d of %d (screen, thread count) pairs met%s." % (
            len(met), len(verdicts), "" if len(met) == len(verdicts) else " (not met: %s)" % ", ".join(
                "%s t=%d %.1f×" % v for v in verdicts if v[2] < 5)))
    faster = []
    for q in queries:
        c, t = _run(data, "colonnade", q, 1), _run(data, "talib", q, 1)
        if c and t and t["ms"] < c["ms"]:
            faster.append("%s (%.3g ms vs %.3g ms)" % (q, t["ms"], c["ms"]))
    if faster:
        lines.append("TA-Lib on one thread is faster than Colonnade on one thread on %s." % ", ".join(faster))
    bench = data.get("colonnade_bench")
    if bench:
        lines += ["", "colonnade-bench --suite indicators (in process, `QuoteTable.select`; load average %s → %s):" % (
            bench["machine"].get("loadAverageStart"), bench["machine"].get("loadAverageEnd")), "",
            "| benchmark | median | note |", "|---|---:|---|"]
        for m in bench["results"]:
            if m["suite"] == "indicators":
                lines.append("| %s | %.3g ms | %s |" % (m["name"], float(m["seconds"]) * 1e3, m.get("note", "")))
    return "\n".join(lines)
