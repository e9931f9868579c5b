#!/usr/bin/env python3
"""Self-test of peers.py without colonnade: a small random-walk CSV plus hand-made rows on every
query's boundaries, a plain-Python reference answer, and the peers' answers must all agree.
Also checks that a disagreement is reported as MISMATCH with exit status 1.

    Benchmarks/peers/.venv/bin/python Benchmarks/peers/test_peers.py
"""
import csv
import datetime
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import peers  # noqa: E402

HEADER = ["ticker", "Date", "Open", "High", "Low", "Close", "Volume", "Ex-Dividend", "Split Ratio",
          "Adj. Open", "Adj. High", "Adj. Low", "Adj. Close", "Adj. Volume"]


def boundary_rows():
    """Rows sitting exactly on (and just inside) each query's bounds: exclusive ones must not match."""
    rows = []
    for high in (80.0, 80.01, 82.99, 83.0):
        for low in (78.0, 80.0, 82.0):
            rows.append(["ZZZ", "2001-01-02", 80, high, low, 80.5, 1e6, 0, 1, 80, 80, 72, 80, 1e6])
    for adj_high, adj_low in ((75.0, 72.0), (76.0, 70.0), (85.0, 71.0), (84.9, 74.99), (80.0, 75.0)):
        rows.append(["ZZZ", "2001-01-03", 80, 81, 79, 80.5, 1e6, 0, 1, 80, adj_high, 79, adj_low, 1e6])
    for date in ("2004-12-31", "2005-01-01", "2014-05-10", "2014-05-11"):
        for vol in (1000000.0, 1000001.0):
            for close in (20.0, 20.01, 199.99, 200.0):
                rows.append(["KO", date, close, close, close, close, vol, 0, 1, close, close, close, close, vol])
    rows.append(["KOX", "2006-01-02", 50, 50, 50, 50, 2e6, 0, 1, 50, 50, 50, 50, 2e6])  # not in the list
    for close in (19.99, 20.0, 500.0, 500.01):
        for vol in (499999.0, 500000.0):
            rows.append(["ZZZ", "2003-03-03", close, close, close, close, vol, 0, 1, close, close, close, close, vol])
    return rows


def reference(path):
    """The four queries by plain Python loops over the CSV."""
    out = {q: [0, 0.0] for q in peers.QUERIES if q[0] == "Q"}
    with open(path, newline="") as f:
        r = csv.reader(f)
        ids = [peers.identifier(n) for n in next(r)]
        for rec in r:
            v = dict(zip(ids, rec))
            hi, lo, ahi, alo = float(v["high"]), float(v["low"]), float(v["adj_high"]), float(v["adj_low"])
            close, vol, date = float(v["close"]), float(v["volume"]), v["date"]
            m = {
                "Q1": 80 < hi < 83,
                "Q2": 80 < hi < 83 and 78 < lo < 82 and 75 < ahi < 85 and 70 < alo < 75,
                "Q3": v["ticker"] in peers.TICKERS and peers.DATE_FROM <= date <= peers.DATE_TO
                      and vol > 1000000 and 20 < close < 200,
                "Q4": (close < 20 or close > 500) and not vol < 500000,
            }
            for q, hit in m.items():
                if hit:
                    out[q][0] += 1
                    out[q][1] += close
    return out


def screen_rows():
    """A steadily rising ticker whose last row gaps up 5 % on three times the volume with a wide
    range: every screen holds on its last row (so the latest variants match something)."""
    rows, d = [], datetime.date(2000, 1, 3)
    for i in range(260):
        while d.weekday() >= 5:
            d += datetime.timedelta(days=1)
        close = 10 + 0.125 * i
        o, h, lo, v = close, close * 1.01, close * 0.99, 1e6
        if i == 259:
            o, h, v = 1.05 * (close - 0.125), close * 1.08, 3e6
        rows.append(["ZUP", d.isoformat(), o, h, lo, close, v, 0, 1, o, h, lo, close, v])
        d += datetime.timedelta(days=1)
    return rows


def screen_reference(path):
    """S1..S4 and their latest variants by plain Python loops: each ticker's rows in date order,
    windows over the last n rows, None until full."""
    by_ticker = {}
    with open(path, newline="") as f:
        r = csv.reader(f)
        ids = [peers.identifier(n) for n in next(r)]
        for rec in r:
            v = dict(zip(ids, rec))
            by_ticker.setdefault(v["ticker"], []).append(
                (v["date"], float(v["open"]), float(v["high"]), float(v["low"]), float(v["close"]), float(v["volume"])))
    out = {q: [0, 0.0] for q in peers.QUERIES if q[0] == "S"}

    def window(xs, i, n):
        return xs[i - n + 1:i + 1] if i >= n - 1 else None

    for rows in by_ticker.values():
        rows.sort()
        o, h, lo, c, v = ([row[k] for row in rows] for k in range(1, 6))
        for i in range(len(rows)):
            def mavg(xs, n):
                w = window(xs, i, n)
                return sum(w) / n if w is not None else None
            m50, m200, mv20 = mavg(c, 50), mavg(c, 200), mavg(v, 20)
            w252 = window(h, i, 252)
            hits = {
                "S1": i >= 1 and o[i] > 1.03 * c[i - 1],
                "S2": (h[i] - lo[i]) / c[i] > 0.05 and mv20 is not None and v[i] > 2 * mv20,
                "S3": m50 is not None and m200 is not None and c[i] > m50 and m50 > m200,
                "S4": w252 is not None and h[i] >= max(w252),
            }
            for q, hit in hits.items():
                for name in (q, q + "L") if i == len(rows) - 1 else (q,):
                    if hit:
                        out[name][0] += 1
                        out[name][1] += c[i]
    return out


def main():
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "quotes.csv")
        with open(path, "w") as f:
            subprocess.run([sys.executable, os.path.join(here, "devdata.py"), "--tickers", "30", "--days", "4000",
                            "--seed", "7"], stdout=f, check=True)
            w = csv.writer(f, lineterminator="\n")
            for row in boundary_rows():
                w.writerow([x if isinstance(x, str) else repr(float(x)) for x in row])
        ref = reference(path)
        out_json = os.path.join(tmp, "out.json")
        p = subprocess.run([sys.executable, os.path.join(here, "peers.py"), "--csv", path, "--no-colonnade",
                            "--repeat", "2", "--threads", "2", "--json", out_json, "--queries", "Q1,Q2,Q3,Q4"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            failures.append("peers.py exited %d:\n%s\n%s" % (p.returncode, p.stdout, p.stderr))
        else:
            report = json.load(open(out_json))
            for r in report["results"]:
                for run in r["runs"]:
                    want = tuple(ref[run["query"]])
                    if not peers.agree(want, tuple(run["result"])):
                        failures.append("%s %s t=%d: got %r, reference %r" % (r["engine"], run["query"],
                                                                              run["threads"], run["result"], want))
            engines = {(r["engine"], run["threads"]) for r in report["results"] for run in r["runs"]}
            expected = {("duckdb", 1), ("duckdb", 2), ("polars", 1), ("polars", 2), ("numpy", 1), ("sqlite", 1)}
            if engines != expected:
                failures.append("engines/threads measured: %s, expected %s" % (sorted(engines), sorted(expected)))
        print("reference:", {q: (c, round(s, 2)) for q, (c, s) in ref.items()})

        # The screens, on random walks alone (one row per ticker and date: a window's order is defined).
        screens_csv = os.path.join(tmp, "screens.csv")
        with open(screens_csv, "w") as f:
            subprocess.run([sys.executable, os.path.join(here, "devdata.py"), "--tickers", "25", "--days", "700",
                            "--seed", "11"], stdout=f, check=True)
            w = csv.writer(f, lineterminator="\n")
            for row in screen_rows():
                w.writerow([x if isinstance(x, str) else repr(float(x)) for x in row])
        screens = [q for q in peers.QUERIES if q[0] == "S"]
        sref = screen_reference(screens_csv)
        p = subprocess.run([sys.executable, os.path.join(here, "peers.py"), "--csv", screens_csv, "--no-colonnade",
                            "--repeat", "1", "--threads", "2", "--json", out_json, "--queries", ",".join(screens),
                            "--engines", "duckdb,polars"], capture_output=True, text=True)
        if p.returncode != 0:
            failures.append("peers.py (screens) exited %d:\n%s\n%s" % (p.returncode, p.stdout, p.stderr))
        else:
            report = json.load(open(out_json))
            seen = set()
            for r in report["results"]:
                for run in r["runs"]:
                    seen.add((r["engine"], run["query"], run["threads"]))
                    want = tuple(sref[run["query"]])
                    if "exact" in run and not peers.within(run["exact"], want):
                        failures.append("exact bounds %r exclude the reference %r for %s" % (run["exact"], want, run["query"]))
                    if not peers.agree(want, tuple(run["result"])):
                        failures.append("%s %s t=%d: got %r, reference %r" % (r["engine"], run["query"],
                                                                              run["threads"], run["result"], want))
            expected = {(e, q, t) for e in ("duckdb", "polars") for q in screens for t in (1, 2)}
            if seen != expected:
                failures.append("screens measured: %s, expected %s" % (sorted(seen), sorted(expected)))
            if any(sref[q][0] == 0 for q in screens):
                failures.append("a screen matches nothing in the test data: %r" % sref)
        print("screens reference:", {q: (c, round(s, 2)) for q, (c, s) in sref.items()})

    # A disagreement must be reported.
    fake = [dict(engine="colonnade", runs=[dict(query=q, threads=1, result=(10, 100.0)) for q in peers.QUERIES]),
            dict(engine="duckdb", runs=[dict(query=q, threads=1, result=(10, 100.0 * (1 + 1e-12))) for q in peers.QUERIES]
                 + [dict(query="Q2", threads=2, result=(11, 100.0))]),
            dict(engine="sqlite", runs=[dict(query="Q3", threads=1, result=(10, 100.001))])]
    lines = peers.check(fake)
    if len(lines) != 2 or "Q2" not in lines[0] or "DuckDB (2 threads)" not in lines[0] or "SQLite" not in lines[1]:
        failures.append("check() reported %r" % lines)

    # Agreement per query, from the answers: the same answers agree; answers that differ inside
    # the exact-tie window "differ" and show each engine's count (never one figure for all); a
    # wrong answer is a "mismatch".
    tie = [[10, 100.0], [14, 140.0]]
    fake = [dict(engine="colonnade", runs=[dict(query="Q1", threads=1, result=(10, 100.0)),
                                           dict(query="S3", threads=1, result=(12, 120.0), exact=tie),
                                           dict(query="S4", threads=1, result=(5, 50.0))]),
            dict(engine="duckdb", runs=[dict(query="Q1", threads=1, result=(10, 100.0)),
                                        dict(query="S3", threads=1, result=(11, 110.0)),
                                        dict(query="S4", threads=1, result=(6, 60.0))])]
    status = {r["query"]: r for r in peers.agreement(fake)}
    if [status[q]["status"] for q in ("Q1", "S3", "S4")] != ["agree", "differ", "mismatch"]:
        failures.append("agreement() gave %r" % status)
    elif status["S3"]["answers"] != {"Colonnade": [12, 120.0], "DuckDB": [11, 110.0]}:
        failures.append("agreement() answers %r" % status["S3"]["answers"])
    sentence = peers.agreement_sentence(fake)
    if "They differ on S3, S4" not in sentence or "Colonnade 12; DuckDB 11" not in sentence or "Q1" not in sentence:
        failures.append("agreement_sentence() said %r" % sentence)

    for f in failures:
        print("FAIL:", f)
    total = 4
    print("%d passed, %d failed" % (total - min(total, len(failures)), min(total, len(failures))))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
