#!/usr/bin/env python3
"""A tiny random-walk generator of WIKI-shaped CSV, for developing and testing peers.py
without a `colonnade` binary. Benchmarks use `colonnade generate --csv` instead.

    python3 devdata.py --tickers 20 --days 500 --seed 1 > quotes.csv
"""
import argparse
import datetime
import math
import random
import sys

WELL_KNOWN = ["AAPL", "MSFT", "AMZN", "GOOG", "FB", "FDX", "KO", "ORCL", "IBM", "INTC", "CSCO", "XOM", "BRK.A"]
HEADER = ["ticker", "Date", "Open", "High", "Low", "Close", "Volume", "Ex-Dividend", "Split Ratio",
          "Adj. Open", "Adj. High", "Adj. Low", "Adj. Close", "Adj. Volume"]


def symbol(i):
    return WELL_KNOWN[i] if i < len(WELL_KNOWN) else "X%04d" % i


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tickers", type=int, default=20)
    ap.add_argument("--days", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    days, d = [], datetime.date(2000, 1, 3)
    while len(days) < a.days:
        if d.weekday() < 5:
            days.append(d.isoformat())
        d += datetime.timedelta(days=1)
    out = sys.stdout
    out.write(",".join(HEADER) + "\n")
    for t in range(a.tickers):
        level = math.log(5) + (math.log(800) - math.log(5)) * rng.random()
        lp, vol = level, 0.01 + 0.02 * rng.random()
        base = math.exp(math.log(2e5) + 4 * rng.random())
        factor = 0.5 + rng.random()  # a fixed "adjustment" so adj_* differ from raw and are not cents
        close = round(math.exp(lp), 2)
        for day in days:
            lp += 0.002 * (level - lp) + vol * rng.gauss(0, 1)
            o = max(0.01, round(close * (1 + 0.004 * rng.gauss(0, 1)), 2))
            close = max(0.01, round(math.exp(lp), 2))
            h = round(max(o, close) * (1 + 0.008 * rng.random()), 2)
            lo = max(0.01, round(min(o, close) * (1 - 0.008 * rng.random()), 2))
            v = float(round(base * math.exp(0.4 * rng.gauss(0, 1))))
            row = [symbol(t), day, o, h, lo, close, v, 0.0, 1.0,
                   o * factor, h * factor, lo * factor, close * factor, v / factor]
            out.write(",".join(x if isinstance(x, str) else repr(x) for x in row) + "\n")


if __name__ == "__main__":
    main()
