"""The crossticker suite's section of docs/BENCHMARKS.md (issue 31), from crossticker.json."""

NAMES = {"X1": "X1 momentum decile `xpct(pct_change(close, 250)) > 0.9 --on latest`",
         "X2": "X2 relative strength `close / ref(close, FIRST) > mmax(close / ref(close, FIRST), 50)`",
         "X3": "X3 breadth `high >= mmax(high, 252) --count --by date`",
         "X4": "X4 weekly bars `--agg 'first(open),max(high),min(low),last(close),sum(volume)' --by ticker,week`"}


def section(data):
    budget = (" (a peer's query stops after %d or more runs once they have taken %.0f s)" % (data["min_runs"], data["repeat_budget_s"])
              if "repeat_budget_s" in data else "")
    out = ["Size %s, %d threads, %d timed runs each (median)%s, commit %s; load average (1, 5, 15 min) %s at the start, %s at the end "
           "(a shared machine: compare the engines with each other, same run). Colonnade is `filter --timing`'s `query_ms` on the "
           "snapshot (in process, the query alone); Polars and DuckDB are timed in process on the same rows read from CSV." % (
               data.get("size") or "?", data["threads"], data["repeat"], budget, data.get("commit") or "?",
               " / ".join("%.2f" % x for x in data["load_start"]), " / ".join("%.2f" % x for x in data["load_end"])), "",
           "| question | Colonnade | Polars | DuckDB | Polars / Colonnade | target ≥ %.0f× | answers agree |" % data["target_ratio"],
           "|---|---:|---:|---:|---:|---|---|"]
    for q in ["X1", "X2", "X3", "X4"]:
        r = data["questions"][q]
        out.append("| %s | %.1f ms | %.1f ms | %.1f ms | %.1f× | %s | %s |" % (
            NAMES[q], r["colonnade_ms"], r["polars_ms"], r["duckdb_ms"], r["polars_ratio"],
            "met" if r["polars_ratio"] >= data["target_ratio"] else "**not met**", "yes" if r["agree"] else "**MISMATCH**"))
    x1 = data["questions"]["X1"]["colonnade_ms"]
    if data.get("size") == "large":
        out += ["", "X1 under %.0f ms on 20 M rows: %.1f ms, %s." % (data["x1_target_ms"], x1, "met" if x1 < data["x1_target_ms"] else "**not met**")]
    else:
        out += ["", "X1 under %.0f ms on 20 M rows: not measured at this size (%.1f ms at %s)." % (data["x1_target_ms"], x1, data.get("size") or "?")]
    if data.get("bench"):
        out += ["", "colonnade-bench's crossticker suite (the engine called in process, no CLI):", "",
                "| benchmark | median | spread | answer |", "|---|---:|---:|---|"]
        for b in data["bench"]:
            out.append("| %s | %.2f ms | %.0f %% | %s |" % (b["name"], b["seconds"] * 1e3, (b.get("spread") or 0) * 100, b.get("note", "")))
    return "\n".join(out)
