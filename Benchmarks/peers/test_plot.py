#!/usr/bin/env python3
"""Self-test of plot.py (standard library only): a synthetic peers report renders to well-formed
SVG whose bars are all inside the view box, with one bar per engine, query and thread setting.

    python3 Benchmarks/peers/test_plot.py
"""
import os
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot  # noqa: E402

NS = "{http://www.w3.org/2000/svg}"


def report():
    engines = {"colonnade": 0.5, "duckdb": 5.0, "polars": 12.0, "numpy": 40.0, "sqlite": 900.0}
    results = []
    for e, base in engines.items():
        runs = [dict(query=q, threads=t, ms=base * (i + 1) / t) for i, q in enumerate(["Q1", "Q2", "Q3", "Q4"])
                for t in ([1] if e in plot.SINGLE_THREADED else [1, 2])]
        results.append(dict(engine=e, load_ms=base * 100, runs=runs))
    return dict(meta=dict(rows=5000000, repeat=10, threads=2, date="2026-11-23T00:00:00",
                          machine=dict(cpu="test", usable_cores=2)),
                queries={"Q1": "", "Q2": "", "Q3": "", "Q4": ""}, results=results)


def main():
    charts = plot.charts(report())
    assert set(charts) == {"peers-queries.svg", "peers-load.svg"}, charts.keys()
    for name, text in charts.items():
        root = ET.fromstring(text.encode())
        _, _, w, h = (float(v) for v in root.get("viewBox").split())
        bars = [r for r in root.iter(NS + "rect") if r.get("height") not in (None, "10") and float(r.get("y")) > 60]
        for r in bars:
            x, y, bw, bh = (float(r.get(k)) for k in ("x", "y", "width", "height"))
            assert 0 <= x and x + bw <= w + 0.05 and 0 <= y and y + bh <= h, (name, r.attrib)
        expected = 5 * 4 * 2 if name == "peers-queries.svg" else 5
        assert len(bars) == expected, (name, len(bars), expected)
    print("plot.py self-test passed")


if __name__ == "__main__":
    main()
