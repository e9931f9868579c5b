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


def type_fixtures():
    """The type fixtures (`--types`): decimals on FIXED_LEN_BYTE_ARRAY, BYTE_STREAM_SPLIT on
    FIXED_LEN_BYTE_ARRAY, float16, integers of every width, timestamps in every unit and with time
    zones, times of day other than midnight, other ticker encodings and nested Arrow columns."""
    import decimal
    t = arrow_table()
    # DECIMAL on FIXED_LEN_BYTE_ARRAY: pyarrow's default for decimal128 (and Polars' decimals).
    dec = pa.table({
        "ticker": t["ticker"], "date": t["date"],
        "open": pa.array([decimal.Decimal(str(v)) for v in OPEN], pa.decimal128(12, 3)),
        "close": pa.array([None if v is None else decimal.Decimal(str(v)) for v in CLOSE], pa.decimal128(38, 10)),
        "volume": pa.array([None if v is None else decimal.Decimal(v) for v in VOLUME], pa.decimal128(18, 0)),
    })
    pq.write_table(dec, path("pyarrow-decimal-flba.parquet"))
    pq.write_table(dec, path("pyarrow-decimal-flba-split.parquet"), use_dictionary=False, compression="none",
                   column_encoding={"open": "BYTE_STREAM_SPLIT", "close": "BYTE_STREAM_SPLIT", "volume": "BYTE_STREAM_SPLIT"})
    dec256 = dec.cast(pa.schema([("ticker", pa.string()), ("date", pa.date32()), ("open", pa.decimal256(40, 3)),
                                 ("close", pa.decimal256(50, 10)), ("volume", pa.decimal256(18, 0))]))
    pq.write_table(dec256, path("pyarrow-decimal256.parquet"))
    pl.from_arrow(dec).write_parquet(path("polars-decimal.parquet"))
    con = duckdb.connect()
    con.register("t", t)
    con.execute(f"COPY (SELECT ticker, date, open::DECIMAL(30,3) AS open, close::DECIMAL(38,10) AS close, volume::DECIMAL(18,0) AS volume FROM t) "
                f"TO '{path('duckdb-decimal-wide.parquet')}' (FORMAT parquet)")
    # float16 prices (Parquet FLOAT16 on FIXED_LEN_BYTE_ARRAY(2), Arrow halffloat), exact in half precision.
    import numpy as np
    half = pa.table({"ticker": t["ticker"], "date": t["date"],
                     "open": pa.array(np.array(OPEN, dtype=np.float16)),
                     "close": pa.array([None if v is None else np.float16(v) for v in CLOSE], pa.float16()),
                     "volume": t["volume"]})
    pq.write_table(half, path("pyarrow-float16.parquet"))
    pq.write_table(half, path("pyarrow-float16-split.parquet"), use_dictionary=False,
                   column_encoding={"open": "BYTE_STREAM_SPLIT", "close": "BYTE_STREAM_SPLIT"})
    with ipc.new_file(path("pyarrow-float16.arrow"), half.schema) as w:
        w.write_table(half)
    # Integers of every width and signedness.
    ints = pa.table({"ticker": t["ticker"], "date": t["date"],
                     "i8": pa.array([-128, -1, 0, 1, 127, 5, 6, 7, None], pa.int8()),
                     "u8": pa.array([0, 1, 2, 3, 255, 5, 6, 7, None], pa.uint8()),
                     "i16": pa.array([-32768, -1, 0, 1, 32767, 5, 6, 7, None], pa.int16()),
                     "u16": pa.array([0, 1, 2, 3, 65535, 5, 6, 7, None], pa.uint16()),
                     "i32": pa.array([-2**31, -1, 0, 1, 2**31 - 1, 5, 6, 7, None], pa.int32()),
                     "u32": pa.array([0, 1, 2, 3, 2**32 - 1, 5, 6, 7, None], pa.uint32()),
                     "i64": pa.array([-2**63, -1, 0, 1, 2**63 - 1, 5, 6, 7, None], pa.int64()),
                     "u64": pa.array([0, 1, 2, 3, 2**63 - 1, 5, 6, 7, None], pa.uint64())})
    pq.write_table(ints, path("pyarrow-integers.parquet"))
    with ipc.new_file(path("pyarrow-integers.arrow"), ints.schema) as w:
        w.write_table(ints)
    pl.from_arrow(ints).write_parquet(path("polars-integers.parquet"))
    pl.from_arrow(ints).write_ipc(path("polars-integers.arrow"))
    # Timestamps: every unit, naive and with a time zone (the day in that zone), UTC-adjusted Parquet.
    def stamps(unit, tz=None, hour=0):
        import zoneinfo
        zone = None
        if tz and tz[0] in "+-":
            sign = 1 if tz[0] == "+" else -1
            zone = datetime.timezone(sign * datetime.timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6])))
        elif tz:
            zone = zoneinfo.ZoneInfo(tz)
        ds = [datetime.datetime(d.year, d.month, d.day, hour, tzinfo=zone) for d in DAYS]
        return t.set_column(1, "date", pa.array(ds, pa.timestamp(unit, tz=tz)))
    for unit in ["s", "ms", "us", "ns"]:
        with ipc.new_file(path(f"pyarrow-timestamp-{unit}.arrow"), stamps(unit).schema) as w:
            w.write_table(stamps(unit))
    for tz in ["America/New_York", "Asia/Tokyo", "+05:30"]:
        name = tz.replace("/", "-").replace("+", "plus").replace(":", "")
        with ipc.new_file(path(f"pyarrow-timestamp-{name}.arrow"), stamps("us", tz).schema) as w:
            w.write_table(stamps("us", tz))
    pl.from_arrow(stamps("ns", "Asia/Tokyo")).write_ipc(path("polars-timestamp-tokyo.arrow"))
    pq.write_table(stamps("ms", "UTC"), path("pyarrow-timestamp-utc-ms.parquet"))
    pq.write_table(stamps("ns"), path("pyarrow-timestamp-ns.parquet"))
    # A time of day other than midnight (the close, 16:00 in New York): one note, the day kept.
    with ipc.new_file(path("pyarrow-timestamp-close.arrow"), stamps("us", "America/New_York", 16).schema) as w:
        w.write_table(stamps("us", "America/New_York", 16))
    pq.write_table(stamps("us", None, 16), path("pyarrow-timestamp-close.parquet"))
    con.register("s", stamps("us", None, 16))
    con.execute(f"COPY (SELECT * FROM s) TO '{path('duckdb-timestamp-close.parquet')}' (FORMAT parquet)")
    # Two rows of one ticker on one day (09:30 and 16:00): an error, never a silent upsert.
    twice = stamps("us", None, 16)
    dup = pa.concat_tables([twice, stamps("us", None, 9).slice(0, 1)])
    pq.write_table(dup, path("pyarrow-timestamp-twice.parquet"))
    # Tickers as large_string, string_view and dictionary<int8, string>.
    for kind, typ in [("large-string", pa.large_string()), ("string-view", pa.string_view()),
                      ("dictionary", pa.dictionary(pa.int8(), pa.string()))]:
        tt = t.set_column(0, "ticker", pa.array(TICKERS, pa.string()).cast(typ))
        with ipc.new_file(path(f"pyarrow-ticker-{kind}.arrow"), tt.schema) as w:
            w.write_table(tt)
    pq.write_table(t.set_column(0, "ticker", pa.array(TICKERS).dictionary_encode()), path("pyarrow-ticker-dictionary.parquet"))
    # Nested Arrow columns beside the quotes: skipped with the note.
    nested = t.append_column("tags", pa.array([["a"], [], ["b", "c"]] * 3)).append_column(
        "meta", pa.array([{"x": i, "y": str(i)} for i in range(9)])).append_column(
        "sizes", pa.array([[1, 2]] * 9, pa.list_(pa.int32(), 2)))
    with ipc.new_file(path("pyarrow-nested.arrow"), nested.schema) as w:
        w.write_table(nested)
    pl.from_arrow(nested.drop_columns(["sizes"])).write_ipc(path("polars-nested.arrow"))
    print("wrote type fixtures with", f"pyarrow {pa.__version__}, Polars {pl.__version__}, DuckDB {duckdb.__version__}")


def dataset_fixtures():
    """The dataset fixtures (`--datasets`), under datasets/: directories written by pyarrow, DuckDB
    and Spark (or pyarrow with Spark's options when Spark cannot run), with Hive partition keys,
    non-data files, a Delta table, and zips of Parquet and Arrow files."""
    import shutil
    import zipfile
    root = path("datasets")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    d = lambda name: os.path.join(root, name)
    t = arrow_table()
    # pyarrow: partitioned by ticker (the files lack the column), and by an `exchange` key that
    # is not a quote (skipped with a note).
    pq.write_to_dataset(t, d("pyarrow-by-ticker"), partition_cols=["ticker"])
    ex = t.append_column("exchange", pa.array(["NYSE", "NYSE", "NYSE", "NASDAQ", "NASDAQ", "NASDAQ", "NYSE", "NYSE", "NYSE"]))
    pq.write_to_dataset(ex, d("pyarrow-by-exchange"), partition_cols=["exchange"])
    # Tickers that need percent-encoding in a directory name, and a null ticker.
    odd = t.set_column(0, "ticker", pa.array(["BRK/A"] * 3 + ["A B"] * 3 + ["X=Y%"] * 3))
    pq.write_to_dataset(odd, d("pyarrow-escaped-tickers"), partition_cols=["ticker"])
    nul = t.set_column(0, "ticker", pa.array(["AAA"] * 3 + [None] * 3 + ["CCC"] * 3, pa.string()))
    pq.write_to_dataset(nul, d("pyarrow-null-ticker"), partition_cols=["ticker"])
    # DuckDB: PARTITION_BY ticker with zstd, and by year (not stored in the files).
    con = duckdb.connect()
    con.register("t", t)
    con.execute(f"COPY t TO '{d('duckdb-by-ticker')}' (FORMAT parquet, PARTITION_BY (ticker), COMPRESSION zstd)")
    con.execute(f"COPY (SELECT *, year(date) AS year FROM t) TO '{d('duckdb-by-year')}' (FORMAT parquet, PARTITION_BY (year))")
    # Spark: parquet.writer.version v2, INT96 timestamps, zstd, partitionBy("ticker").
    spark_dataset(t, d("spark-by-ticker"))
    # A Delta table (deltalake): refused until Colonnade reads Delta logs.
    try:
        import deltalake
        deltalake.write_deltalake(d("delta-table"), t)
    except ImportError:
        pass
    # Zips: the pyarrow dataset as a zip (partition keys in member paths); flat Parquet and Arrow
    # members; a zip inside a zip (refused).
    with zipfile.ZipFile(d("pyarrow-by-ticker.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        for dirpath, _, files in sorted(os.walk(d("pyarrow-by-ticker"))):
            for f in sorted(files):
                full = os.path.join(dirpath, f)
                z.write(full, os.path.relpath(full, d("pyarrow-by-ticker")))
    with zipfile.ZipFile(d("files.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        z.write(path("pyarrow-zstd.parquet"), "quotes.parquet")
    with zipfile.ZipFile(d("arrow.zip"), "w", zipfile.ZIP_STORED) as z:
        z.write(path("pyarrow-feather-default.arrow"), "quotes.arrow")
    with zipfile.ZipFile(d("nested.zip"), "w") as z:
        z.write(d("files.zip"), "inner.zip")
        z.write(path("pyarrow-zstd.parquet"), "quotes.parquet")
    print("wrote dataset fixtures")


def spark_dataset(t, out):
    """Spark's partitionBy("ticker") with zstd, v2 pages and INT96 timestamps; pyarrow with the
    same options and Spark's file names when pyspark cannot run here."""
    import shutil
    try:
        from pyspark.sql import SparkSession
        spark = (SparkSession.builder.master("local[1]").appName("fixtures")
                 .config("spark.sql.parquet.outputTimestampType", "INT96")
                 .config("spark.sql.parquet.compression.codec", "zstd")
                 .config("spark.hadoop.parquet.writer.version", "v2")
                 .config("spark.sql.session.timeZone", "UTC")
                 .config("spark.ui.enabled", "false").getOrCreate())
        rows = [(tk, datetime.datetime(d.year, d.month, d.day), o, c, v)
                for tk, d, o, c, v in zip(TICKERS, DAYS, OPEN, CLOSE, VOLUME)]
        df = spark.createDataFrame(rows, "ticker string, date timestamp, open double, close double, volume long")
        df.coalesce(1).write.mode("overwrite").option("parquet.writer.version", "v2").partitionBy("ticker").parquet(out)
        spark.stop()
        print("spark dataset written by Spark", spark.version)
    except Exception as e:  # pyspark missing, or no JVM
        print("Spark unavailable (", type(e).__name__, e, "): pyarrow with Spark's options")
        shutil.rmtree(out, ignore_errors=True)
        import uuid
        job = uuid.UUID(int=32)
        ts = arrow_table("timestamp")
        for tk in ["AAA", "BBB", "CCC"]:
            part = os.path.join(out, f"ticker={tk}")
            os.makedirs(part)
            rows = ts.filter(pa.compute.equal(ts["ticker"], tk)).drop_columns(["ticker"])
            name = f"part-00000-{job}.c000.zstd.parquet"
            pq.write_table(rows, os.path.join(part, name), compression="zstd", data_page_version="2.0",
                           use_deprecated_int96_timestamps=True)
            open(os.path.join(part, f".{name}.crc"), "wb").write(b"crc\x00\x00\x00\x00")
        open(os.path.join(out, "_SUCCESS"), "w").close()
        open(os.path.join(out, "._SUCCESS.crc"), "wb").write(b"crc")


if __name__ == "__main__":
    import sys
    if "--codecs" in sys.argv:
        codec_fixtures()
    elif "--types" in sys.argv:
        type_fixtures()
    elif "--datasets" in sys.argv:
        dataset_fixtures()
    else:
        main()
