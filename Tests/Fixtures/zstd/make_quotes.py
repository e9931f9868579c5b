# Writes quotes.csv: a deterministic daily-quotes CSV (about 165 KB, more than one 128 KiB block).
import random
r = random.Random(32)
lines = ["Date,Ticker,Open,High,Low,Close,Volume"]
price = 100.0
for day in range(3400):
    price = max(1.0, price * (1 + r.gauss(0, 0.02)))
    o = price * (1 + r.gauss(0, 0.005)); c = price
    h = max(o, c) * (1 + abs(r.gauss(0, 0.01))); l = min(o, c) * (1 - abs(r.gauss(0, 0.01)))
    y, d = 2010 + day // 365, day % 365
    lines.append(f"{y}-{d // 28 % 12 + 1:02d}-{d % 28 + 1:02d},{r.choice(['AAPL','MSFT','IBM','ZSTD'])},{o:.2f},{h:.2f},{l:.2f},{c:.2f},{r.randrange(10**5, 10**8)}")
open("quotes.csv", "w").write("\n".join(lines) + "\n")
