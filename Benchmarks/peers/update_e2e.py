"""Issue 33 end to end: `colonnade fetch --update` against a loopback vendor, process start to
snapshot saved, HTTP included, with one 2:1 split among every ticker beside none.

    python3 Benchmarks/peers/update_e2e.py --bin .build/release/colonnade --base BASE.snapshot \
        --runs 5 --label 20M --json adjustments.json

The vendor (Python's ThreadingHTTPServer on 127.0.0.1, in this process) plays the Tables API
(`/api/v3/datatables/WIKI/PRICES.json`, pages of 10,000 rows with a cursor) from each ticker's
newest stored row, which it reads from the base snapshot with `colonnade export --on latest`: the
overlapping day again and one new weekday at the same prices. Under `/split/` the first ticker's
new day is a 2:1 split (raw prices halved, volume doubled, split_ratio 2) and the vendor restates
its adjusted values (the overlapping day's halved), as WIKI restates: `fetch --update` must notice
and recompute that ticker's adjusted history. The same shape as colonnade-bench's in-process rows
(Benchmarks/ColonnadeBenchmarks/AdjustmentSuite.swift), which leave HTTP out.

Each run copies the base snapshot (not timed), waits for the copy to reach the disk and reads it
back (evicted first: a file just written maps about 20 % slower on this VM than one read back,
and its writeback would run beside the timed process; MEASUREMENTS.md, *Versions: appended days
read in place*), then times `colonnade fetch --table WIKI/PRICES TICKER… --update` as a whole
process, the modes alternating. Every run's exit status is checked,
and the first run of each mode is checked for its answer: one new row per ticker, `verify
--adjustments` clean, and (split) the restatement note naming the ticker. The results are appended
to --json (colonnade-bench's adjustments JSON) as suite "adjustments" rows.
"""

import argparse
import csv
import datetime
import http.server
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

from pagecache import recache, settle

PAGE = 10_000


def die(message):
    sys.exit("update_e2e.py: " + message)


def run(argv, **kw):
    p = subprocess.run(argv, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        die("%s failed (exit status %d): %s" % (" ".join(argv[:3]), p.returncode, p.stderr.strip()[-2000:]))
    return p


def next_weekday(day):
    d = datetime.date.fromisoformat(day) + datetime.timedelta(days=1)
    while d.weekday() >= 5:
        d += datetime.timedelta(days=1)
    return d.isoformat()


class Vendor:
    """The rows the vendor serves, per mode ("none" or "split"), ticker by ticker in request order."""

    def __init__(self, latest_csv):
        reader = csv.reader(io.StringIO(latest_csv))
        header = next(reader)
        self.columns = header
        self.rows = {r[0]: r for r in reader}
        if not self.rows:
            die("the base snapshot has no rows")
        self.split_ticker = sorted(self.rows)[0]
        idx = {n: i for i, n in enumerate(header)}
        for name in ("ticker", "date", "open", "high", "low", "close", "volume", "ex_dividend", "split_ratio",
                     "adj_open", "adj_high", "adj_low", "adj_close", "adj_volume"):
            if name not in idx:
                die("the base snapshot has no %s column (WIKI's column set is needed)" % name)
        self.idx = idx

    def served(self, ticker, mode):
        """The overlapping day and the new day of `ticker` (the API's code: `BRK_A` for the stored
        `BRK.A`), as JSON arrays naming it by that code, as WIKI/PRICES does."""
        r = self.rows.get(ticker) or self.rows.get(ticker.replace("_", "."))
        if r is None:
            return []
        i = self.idx
        values = [float(x) if x != "" else None for x in r[2:]]
        names = self.columns[2:]
        old = dict(zip(names, values))
        new = dict(old)
        new["ex_dividend"] = 0.0
        new["split_ratio"] = 1.0
        if mode == "split" and ticker == self.split_ticker:
            for n in ("adj_open", "adj_high", "adj_low", "adj_close"):
                old[n] = old[n] / 2 if old[n] is not None else None
            for n in ("open", "high", "low", "close", "adj_open", "adj_high", "adj_low", "adj_close"):
                new[n] = new[n] / 2 if new[n] is not None else None
            new["volume"] = new["volume"] * 2 if new["volume"] is not None else None
            new["split_ratio"] = 2.0
        day = r[i["date"]]
        return [[ticker, day] + [old[n] for n in names], [ticker, next_weekday(day)] + [new[n] for n in names]]


def serve(vendor):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            parts = url.path.split("/")
            mode = parts[1] if len(parts) > 1 and parts[1] in ("none", "split") else None
            if mode is None or url.path != "/%s/api/v3/datatables/WIKI/PRICES.json" % mode:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            query = urllib.parse.parse_qs(url.query)
            tickers = ",".join(query.get("ticker", [""])).split(",")
            rows = [row for t in tickers if t for row in vendor.served(t, mode)]
            start = int(query.get("qopts.cursor_id", ["0"])[0] or 0)
            page = rows[start:start + PAGE]
            cursor = start + PAGE if start + PAGE < len(rows) else None
            columns = [{"name": n, "type": "String" if n == "ticker" else "Date" if n == "date" else "double"}
                       for n in vendor.columns]
            body = json.dumps({"datatable": {"data": page, "columns": columns},
                               "meta": {"next_cursor_id": None if cursor is None else str(cursor)}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="the colonnade executable (release)")
    ap.add_argument("--base", required=True, help="the base snapshot (generated, WIKI's columns)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--label", required=True, help="the size label of the rows' names (e.g. 20M)")
    ap.add_argument("--json", required=True, help="colonnade-bench's adjustments JSON, appended to")
    args = ap.parse_args()
    colonnade = os.path.abspath(args.bin)
    latest = run([colonnade, "export", "--snapshot", args.base, "--on", "latest", "--max-stale", "none",
                  "--format", "csv"]).stdout
    vendor = Vendor(latest)
    tickers = sorted(vendor.rows)
    server = serve(vendor)
    port = server.server_address[1]
    work = tempfile.mkdtemp(prefix="update-e2e-", dir=os.path.dirname(os.path.abspath(args.base)))
    env = dict(os.environ, HOME=work, NASDAQ_DATA_LINK_API_KEY="bench-not-a-key")
    env.pop("COLONNADE_SNAPSHOT", None)
    times = {"none": [], "split": []}
    loads = [os.getloadavg()[0]]
    try:
        base_rows = None
        for attempt in range(args.runs):
            for mode in ("none", "split"):
                path = os.path.join(work, "quotes.snapshot")
                for p in (path, path + ".lock"):
                    if os.path.exists(p):
                        os.remove(p)
                shutil.copyfile(args.base, path)
                settle()
                recache([path])
                argv = [colonnade, "fetch", "--table", "WIKI/PRICES", *tickers, "--update", "--snapshot", path,
                        "--base-url", "http://127.0.0.1:%d/%s" % (port, mode)]
                started = time.perf_counter()
                p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=work)
                elapsed = time.perf_counter() - started
                if p.returncode != 0:
                    die("fetch --update (%s) failed (exit status %d): %s" % (mode, p.returncode, p.stderr.strip()[-2000:]))
                times[mode].append(elapsed)
                if attempt == 0:
                    # The answer: one new row per ticker, adjusted history consistent, the split noticed.
                    check = subprocess.run([colonnade, "verify", "--adjustments", "--snapshot", path],
                                           capture_output=True, text=True, env=env)
                    if check.returncode != 0:
                        die("verify --adjustments after the %s update: exit status %d: %s"
                            % (mode, check.returncode, (check.stdout + check.stderr).strip()[-2000:]))
                    restated = "restated" in p.stderr
                    if restated != (mode == "split") or (mode == "split" and vendor.split_ticker not in p.stderr):
                        die("fetch --update (%s): restatement note %s: %s"
                            % (mode, "missing" if mode == "split" else "unexpected", p.stderr.strip()[-2000:]))
                    new_rows = count_rows(colonnade, path)
                    if base_rows is None:
                        base_rows = count_rows(colonnade, args.base)
                    if new_rows != base_rows + len(tickers):
                        die("fetch --update (%s): %d rows, expected %d + %d" % (mode, new_rows, base_rows, len(tickers)))
        loads.append(os.getloadavg()[0])
    finally:
        server.shutdown()
        shutil.rmtree(work, ignore_errors=True)

    def stats(xs):
        m = statistics.median(xs)
        return m, (max(xs) - min(xs)) / m

    none, split = stats(times["none"]), stats(times["split"])
    with open(args.json) as f:
        data = json.load(f)
    rows = float(base_rows)
    data["results"] += [
        dict(suite="adjustments", name="fetch --update %s end to end, no event: HTTP + upsert + check + save" % args.label,
             seconds=none[0], spread=none[1], runs=len(times["none"]), items=rows, unit="rows", bytes=0,
             note="colonnade fetch --table WIKI/PRICES (%d tickers) --update as a whole process against a loopback "
                  "vendor (Python, 127.0.0.1), load %.2f → %.2f" % (len(tickers), loads[0], loads[-1])),
        dict(suite="adjustments", name="fetch --update %s end to end, one 2:1 split among %d tickers" % (args.label, len(tickers)),
             seconds=split[0], spread=split[1], runs=len(times["split"]), items=rows, unit="rows", bytes=0,
             note="%.2f× the update without one (target ≤ 1.5×); HTTP included; the recomputing path"
                  % (split[0] / none[0])),
    ]
    with open(args.json + ".tmp", "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    os.replace(args.json + ".tmp", args.json)
    print("fetch --update %s end to end: no event %.3f s (spread %.0f %%), one split %.3f s (spread %.0f %%): %.2f×; "
          "load %.2f → %.2f" % (args.label, none[0], none[1] * 100, split[0], split[1] * 100, split[0] / none[0],
                                loads[0], loads[-1]), file=sys.stderr)


def count_rows(colonnade, path):
    """The snapshot's row count, from `info`'s `rows` line."""
    out = run([colonnade, "info", "--snapshot", path]).stdout
    for line in out.splitlines():
        if line.startswith("rows"):
            return int(line.split()[1].replace(",", ""))
    die("no rows line in colonnade info's output")


if __name__ == "__main__":
    main()
