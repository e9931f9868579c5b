"""Reference indicator values from TA-Lib (the C library bundled in PyPI's ta-lib 0.8 wheel) for
the WIKI fixtures in ../quandl, so `swift test` needs no Python. Run from this folder:

    /work/main/Benchmarks/peers/.venv/bin/python generate.py

Writes <TICKER>.talib.csv: date, then EMA(close, 12), EMA(close, 26), RSI(close, 14),
ATR(high, low, close, 14), MACD(close, 12, 26, 9) line and signal, each printed with repr (17
significant digits, round-trips the double); an empty field where TA-Lib returns NaN.
"""
import csv
import numpy as np
import talib

for ticker in ["AAPL"]:  # KO has empty High/Low fields, which TA-Lib cannot take
    with open(f"../quandl/WIKI-{ticker}.asc.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    dates = [r["Date"] for r in rows]
    high = np.array([float(r["High"]) for r in rows])
    low = np.array([float(r["Low"]) for r in rows])
    close = np.array([float(r["Close"]) for r in rows])
    columns = {
        "ema12": talib.EMA(close, timeperiod=12),
        "ema26": talib.EMA(close, timeperiod=26),
        "rsi14": talib.RSI(close, timeperiod=14),
        "atr14": talib.ATR(high, low, close, timeperiod=14),
    }
    macd, signal, _ = talib.MACD(close, fastperiod=12, slowperiod=26, signalperiod=9)
    columns["macd"] = macd
    columns["macdsignal"] = signal
    with open(f"{ticker}.talib.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["date"] + list(columns))
        for i, d in enumerate(dates):
            w.writerow([d] + ["" if np.isnan(v[i]) else repr(float(v[i])) for v in columns.values()])
    print(ticker, len(dates), "rows; talib", talib.__version__)
