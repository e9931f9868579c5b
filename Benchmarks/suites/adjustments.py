"""Issue 33's figures (Benchmarks/suites/70-adjustments.sh → docs/bench/adjustments.json), rendered
by report.py: every ratio and verdict is computed here from the JSON, none is typed."""


def section(data):
    m = data["machine"]
    rows = {r["name"]: r for r in data["results"] if r["suite"] == "adjustments"}

    def find(prefix):
        hits = [r for n, r in rows.items() if n.startswith(prefix)]
        if len(hits) != 1:
            raise SystemExit("adjustments.json: %d results start with %r" % (len(hits), prefix))
        return hits[0]

    def ms(r):
        return "%.0f ms" % (r["seconds"] * 1e3) if r["seconds"] < 10 else "%.1f s" % r["seconds"]

    verify = [r for n, r in rows.items() if n.startswith("verify ") and not n.startswith("verify --adjustments")]
    checks = [
        ("`verify --adjustments` vs `verify` (both warm)", find("verify --adjustments"), verify[0] if len(verify) == 1 else None, 2.0),
        ("`adjust` vs a plain save of the same table (load + save, fsync)", find("adjust "), find("load + save"), 1.5),
        ("update with one split among every ticker vs none (recomputing path), in process after the downloads",
         [r for n, r in rows.items() if n.startswith("update") and "split" in n][0],
         [r for n, r in rows.items() if n.startswith("update") and "no event" in n][0], 1.5),
        ("`fetch --update` with one split vs none, end to end (process start to saved, HTTP on 127.0.0.1 included)",
         [r for n, r in rows.items() if n.startswith("fetch --update") and "split" in n][0],
         [r for n, r in rows.items() if n.startswith("fetch --update") and "no event" in n][0], 1.5),
    ]
    load = "load average %s at the start, %s at the end" % (
        "%.2f" % m["loadAverageStart"] if m.get("loadAverageStart") is not None else "?",
        "%.2f" % m["loadAverageEnd"] if m.get("loadAverageEnd") is not None else "?")
    busy = max(m.get("loadAverageStart") or 0, m.get("loadAverageEnd") or 0)
    out = ["`colonnade-bench --suite adjustments --size %s` at commit %s, %s, %d cores, %d threads; %s." % (
        m["size"], m["commit"], m["date"], m["cores"], m["threads"], load)]
    if busy > m["threads"]:
        out.append("**Loaded**: the load average exceeded the %d threads, so the spreads are wide; compare the rows with "
                   "each other (same run, same load), not with an idle machine. A ratio within the spreads of its two rows "
                   "says the two cost about the same." % m["threads"])
    out += ["In process, warm (the file in the page cache), except the `fetch --update … end to end` rows: "
            "`colonnade fetch --table WIKI/PRICES TICKER… --update` as a whole process against a loopback vendor "
            "(Benchmarks/peers/update_e2e.py: Python's HTTP server on 127.0.0.1 playing the Tables API with each "
            "ticker's overlapping day and one new day; the split ticker's adjusted values restated), on the generated "
            "table of the same size, each run on a fresh copy of the snapshot; the first run of each kind is checked "
            "(one new row per ticker, `verify --adjustments` clean, the restatement noted). The other update rows are "
            "the same work in process after the downloads. The peers' and colonnade-bench's Q2 (adj_close) figures "
            "elsewhere on this page still come from the old generator (CRSP-form dividends) until the next full "
            "`Benchmarks/reproduce.sh` run.", "",
           "| | ours | yardstick | ratio | target | |", "|---|---:|---:|---:|---:|---|"]
    for label, ours, base, target in checks:
        if base is None:
            raise SystemExit("adjustments.json: no plain verify row")
        ratio = ours["seconds"] / base["seconds"]
        out.append("| %s | %s | %s | %.2f× | ≤ %.1f× | %s |" % (label, ms(ours), ms(base), ratio, target,
                                                          "met" if ratio <= target else "**not met**"))
    out += ["", "Every row (median of %s runs; spread is (max − min) / median):" % ", ".join(sorted({str(r["runs"]) for r in rows.values()})), "",
            "| benchmark | median | spread | note |", "|---|---:|---:|---|"]
    for n, r in rows.items():
        out.append("| %s | %s | %.0f %% | %s |" % (n, ms(r), r["spread"] * 100, r["note"]))
    return "\n".join(out)
