#!/usr/bin/env python3
"""Writes the interop fixture files once, with pyarrow, Polars and DuckDB.

Run from the repository root with the Benchmarks/peers virtual environment (plus pyarrow):

    Benchmarks/peers/.venv/bin/python Tests/Fixtures/interop/make_fixtures.py

The same 9 rows go into every file: tickers AAA, BBB, CCC over three days, a float64 `close`
with one null, an int64 `volume` with one null, a float64 `open`. Variants name the tool and its
settings; SOURCES.md lists them with the versions used. swift test reads them back and compares
with exact expected contents (Tests/ColonnadeTests/InteropFixtureTests.swift).
"""
import datetime
import os

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))

TICKERS = ["AAA", "AAA", "AAA", "BBB", "BBB", "BBB", "CCC", "CCC", "CCC"]
DAYS = [datetime.date(2014, 1, 2), datetime.date(2014, 1, 3), datetime.date(2014, 1, 6)] * 3
OPEN = [10.5, 11.25, 12.0, 200.0, 201.5, 199.75, 0.125, 0.25, 0.5]
CLOSE = [10.75, None, 12.5, 201.0, 202.25, 198.5, 0.1875, 0.3125, 0.625]
VOLUME = [1000, 2000, None, 30000000000, 40, 50, 7, 8, 9]


def path(name):
    return os.path.join(HERE, name)


def arrow_table(date_type="date"):
    dates = DAYS
    if date_type == "timestamp":
        dates = [datetime.datetime(d.year, d.month, d.day) for d in DAYS]
    return pa.table({
        "ticker": pa.array(TICKERS, pa.string()),
        "date": pa.array(dates, pa.date32() if date_type == "date" else pa.timestamp("us")),
        "open": pa.array(OPEN, pa.float64()),
        "close": pa.array(CLOSE, pa.float64()),
        "volume": pa.array(VOLUME, pa.int64()),
    })


def main():
    t = arrow_table()
    # pyarrow: IPC file and stream (no compression by default), Feather (LZ4 by default), Parquet.
    with ipc.new_file(path("pyarrow.arrow"), t.schema) as w:
        w.write_table(t)
    with ipc.new_stream(path("pyarrow.arrows"), t.schema) as w:
        w.write_table(t)
    feather.write_feather(t, path("pyarrow-feather-default.arrow"))
    pq.write_table(t, path("pyarrow-default.parquet"))
    pq.write_table(t, path("pyarrow-uncompressed.parquet"), compression="none")
    pq.write_table(arrow_table("timestamp"), path("pyarrow-timestamp.parquet"))
    # Polars: IPC file and stream, Parquet default (zstd), uncompressed and Snappy.
    df = pl.from_arrow(t)
    df.write_ipc(path("polars.arrow"))
    df.write_ipc_stream(path("polars.arrows"))
    df.write_parquet(path("polars-default.parquet"))
    df.write_parquet(path("polars-uncompressed.parquet"), compression="uncompressed")
    df.write_parquet(path("polars-snappy.parquet"), compression="snappy")
    pl.from_arrow(arrow_table("timestamp")).write_ipc(path("polars-timestamp.arrow"))
    # DuckDB: Parquet default (Snappy) and uncompressed; the ticker column named symbol.
    con = duckdb.connect()
    con.register("t", t)
    con.execute(f"COPY (SELECT ticker AS symbol, date, open, close, volume FROM t) TO '{path('duckdb-default.parquet')}' (FORMAT parquet)")
    con.execute(f"COPY (SELECT * FROM t) TO '{path('duckdb-uncompressed.parquet')}' (FORMAT parquet, COMPRESSION uncompressed)")
    con.execute(f"COPY (SELECT ticker, date::TIMESTAMP AS date, open, close, volume FROM t) TO '{path('duckdb-timestamp.parquet')}' (FORMAT parquet)")

    # Files Colonnade must refuse with an error naming the column.
    with ipc.new_file(path("pyarrow-no-date.arrow"), t.drop_columns(["date"]).schema) as w:
        w.write_table(t.drop_columns(["date"]))
    pq.write_table(t.append_column("name", pa.array(["x"] * len(TICKERS))), path("pyarrow-string-value.parquet"))

    versions = f"pyarrow {pa.__version__}, Polars {pl.__version__}, DuckDB {duckdb.__version__}"
    print("wrote fixtures with", versions)


def codec_fixtures():
    """The codec fixtures (`--codecs`): the same rows with GZIP and LZ4 pages and LZ4_FRAME IPC
    bodies. Written separately so the files above stay byte for byte as first written."""
    t = arrow_table()
    pq.write_table(t, path("pyarrow-gzip.parquet"), compression="gzip")
    pq.write_table(t, path("pyarrow-lz4.parquet"), compression="lz4")
    pq.write_table(t, path("pyarrow-lz4-v2pages.parquet"), compression="lz4", data_page_version="2.0")
    with ipc.new_stream(path("pyarrow-lz4.arrows"), t.schema, options=ipc.IpcWriteOptions(compression="lz4")) as w:
        w.write_table(t)
    df = pl.from_arrow(t)
    df.write_parquet(path("polars-gzip.parquet"), compression="gzip")
    df.write_parquet(path("polars-lz4.parquet"), compression="lz4")
    df.write_ipc(path("polars-lz4.arrow"), compression="lz4")
    con = duckdb.connect()
    con.register("t", t)
    con.execute(f"COPY (SELECT * FROM t) TO '{path('duckdb-gzip.parquet')}' (FORMAT parquet, COMPRESSION gzip)")
    con.execute(f"COPY (SELECT * FROM t) TO '{path('duckdb-lz4.parquet')}' (FORMAT parquet, COMPRESSION lz4)")
    # The delta and split encodings (no dictionary, so every column uses them), v1 and v2 pages.
    pq.write_table(t, path("pyarrow-delta-split.parquet"), use_dictionary=False, compression="none",
                   column_encoding={"ticker": "DELTA_BYTE_ARRAY", "date": "DELTA_BINARY_PACKED", "open": "BYTE_STREAM_SPLIT",
                                    "close": "BYTE_STREAM_SPLIT", "volume": "DELTA_BINARY_PACKED"})
    pq.write_table(t, path("pyarrow-delta-length.parquet"), use_dictionary=False, compression="none", data_page_version="2.0",
                   column_encoding={"ticker": "DELTA_LENGTH_BYTE_ARRAY", "date": "DELTA_BINARY_PACKED", "open": "PLAIN",
                                    "close": "PLAIN", "volume": "BYTE_STREAM_SPLIT"})
    con.execute(f"COPY (SELECT * FROM t) TO '{path('duckdb-v2.parquet')}' (FORMAT parquet, PARQUET_VERSION V2, COMPRESSION uncompressed)")
    # Columns that are not quotes beside the quotes: skipped with a note (refused with --strict).
    extra = t.append_column("exchange", pa.array(["NYSE"] * len(TICKERS))).append_column(
        "is_split_day", pa.array([False, True] * 4 + [False]))
    pq.write_table(extra.append_column("tags", pa.array([["a"], [], ["b", "c"]] * 3)), path("pyarrow-extra-columns.parquet"))
    with ipc.new_file(path("pyarrow-extra-columns.arrow"), extra.schema) as w:
        w.write_table(extra)
    pl.from_arrow(extra).write_ipc(path("polars-extra-columns.arrow"))
    # Decimal prices and INT96 dates (Spark's and Impala's timestamps).
    import decimal
    dec = pa.table({
        "ticker": t["ticker"], "date": t["date"],
        "open": pa.array([decimal.Decimal(str(v)) for v in OPEN], pa.decimal128(12, 3)),
        "close": pa.array([None if v is None else decimal.Decimal(str(v)) for v in CLOSE], pa.decimal128(12, 4)),
        "volume": pa.array([None if v is None else decimal.Decimal(v) for v in VOLUME], pa.decimal128(18, 0)),
    })
    pq.write_table(dec, path("pyarrow-decimal-int.parquet"), store_decimal_as_integer=True)
    con.execute(f"COPY (SELECT ticker, date, open::DECIMAL(12,3) AS open, close::DECIMAL(12,4) AS close, volume::DECIMAL(18,0) AS volume FROM t) "
                f"TO '{path('duckdb-decimal.parquet')}' (FORMAT parquet)")
    ts = arrow_table("timestamp")
    pq.write_table(ts, path("pyarrow-int96.parquet"), use_deprecated_int96_timestamps=True)
    # ZSTD (Polars' default Parquet codec; also DuckDB's, pyarrow's and Arrow IPC bodies), and
    # BROTLI, which Colonnade refuses naming it.
    pq.write_table(t, path("pyarrow-zstd.parquet"), compression="zstd")
    pq.write_table(t, path("pyarrow-zstd-v2pages.parquet"), compression="zstd", data_page_version="2.0")
    pq.write_table(t, path("pyarrow-brotli.parquet"), compression="brotli")
    feather.write_feather(t, path("pyarrow-feather-zstd.arrow"), compression="zstd")
    df.write_ipc(path("polars-zstd.arrow"), compression="zstd")
    con.execute(f"COPY (SELECT * FROM t) TO '{path('duckdb-zstd.parquet')}' (FORMAT parquet, COMPRESSION zstd)")
    print("wrote codec fixtures with", f"pyarrow {pa.__version__}, Polars {pl.__version__}, DuckDB {duckdb.__version__}")


if __name__ == "__main__":
    import sys
    if "--codecs" in sys.argv:
        codec_fixtures()
    else:
        main()
