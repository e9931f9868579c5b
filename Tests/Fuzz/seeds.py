#!/usr/bin/env python3
"""Writes the committed seed corpora Tests/Fuzz/Corpus/{JSON,CSV,HTTP,Query} from Tests/Fixtures and
hand-written examples. (Tests/Fuzz/Corpus/Snapshot is written by the Snapshot target itself:
FUZZ_MAKE_SEEDS=Tests/Fuzz/Corpus/Snapshot .build/fuzz/bin/Snapshot.) Run from anywhere; rewrites the files.

Big fixtures are cut to their first rows (CSV: the header and 12 rows; JSON: `data` arrays cut to
4 rows, key order and everything else kept) so the fuzzer spends its time on structure, not on
megabytes of numbers."""
import json, os, pathlib

root = pathlib.Path(__file__).resolve().parent.parent.parent
fixtures = root / "Tests" / "Fixtures"
corpus = root / "Tests" / "Fuzz" / "Corpus"


def put(target, name, data):
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def cut_json(value):
    if isinstance(value, dict):
        return {k: (v[:4] if k == "data" and isinstance(v, list) else cut_json(v)) for k, v in value.items()}
    return value


json_seeds, csv_seeds = {}, {}
for path in sorted(fixtures.rglob("*")):
    if path.suffix == ".json":
        text = path.read_text()
        data = text if len(text) < 4096 else json.dumps(cut_json(json.loads(text)), separators=(",", ":"), ensure_ascii=False)
        json_seeds[path.name] = data
    elif path.suffix == ".csv":
        lines = path.read_text().splitlines(keepends=True)
        csv_seeds[path.name] = "".join(lines[:13])

csv_seeds.update({
    "bom-crlf.csv": "\ufeffDate,Open,Close\r\n2014-01-03,1.5,2\r\n2014-01-02,,3e2\r\n",
    "quoted.csv": 'Date,"Adj. Close","Volume"\n"2014-01-02","86.90000000000001",""\n2014-01-03,-0.0,1E+308\n',
    "datatable.csv": "ticker,date,open,close\nBRK_A,2014-01-02,1,2\nAAPL,2014-01-02,3,\nAAPL,2014-01-01,5,6\n",
    "blank-lines.csv": "Date,Value\n\n2014-01-02,1\n\n2014-01-03,2\n",
    "date-named-column.csv": "Day,Date,Close\n2014-01-02,5,10\n",
    "error.csv": "code,message\nQEAx01,\"We could not recognize your API key, \"\"x\"\"\"\n",
})
json_seeds.update({
    "dataset_data.json": '{"dataset_data":{"limit":null,"column_names":["Date","Open","High"],"data":[["2015-05-28",9.58,null],["2015-05-27",1e3,"86.9"]],"order":"desc"}}',
    "datatable-data-first.json": '{"datatable":{"data":[["AAPL","2014-01-02",1],["BRK_A","2014-01-02",2]],"columns":[{"name":"ticker","type":"String"},{"name":"date","type":"Date"},{"name":"close","type":"BigDecimal(34,12)"}]},"meta":{"next_cursor_id":"abc"}}',
    "escapes.json": '{"dataset":{"dataset_code":"BRK_A","name":"a\\u003cp\\u003e\\"q\\"\\ud83d\\ude00","column_names":["Date","Close"],"data":[["2014-01-02",-0.0]]}}',
})

for name, data in json_seeds.items():
    put("JSON", name, data)
for name, data in csv_seeds.items():
    put("CSV", name, data)

# HTTP: byte 0 = status index (see HTTP.swift), byte 1 = request (0 JSON series, 1 CSV series,
# 2 table page; +128 anonymous), header lines, an empty line, the body.
statuses = [200, 201, 202, 204, 206, 301, 304, 400, 401, 403, 404, 409, 410, 413, 414, 422, 429, 500, 502, 503, 504]
key = "FUZZ-k3y-9f8e7d6c5b4a"


def http(name, status, request, headers, body):
    head = bytes([statuses.index(status), request]) + "".join(f"{k}: {v}\n" for k, v in headers.items()).encode() + b"\n"
    put("HTTP", name, head + (body if isinstance(body, bytes) else body.encode()))


http("200-json", 200, 0, {"Content-Type": "application/json; charset=utf-8"}, json_seeds["dataset_data.json"])
http("200-csv", 200, 1, {"Content-Type": "text/csv"}, csv_seeds["WIKI-AAPL.2014.asc.csv"])
http("200-table", 200, 2, {"Content-Type": "application/json"}, json_seeds["WIKI-PRICES.datatable.json"])
http("200-html", 200, 0, {"Content-Type": "text/html"}, "<html><body>Incapsula</body></html>")
http("202-export", 202, 2, {"Content-Type": "application/json", "Retry-After": "30"}, json_seeds["WIKI-PRICES.export-status.creating.json"])
http("400-qecx02-csv", 400, 1, {"Content-Type": "text/csv"}, csv_seeds["error.QECx02.csv"])
http("404-qecx05", 404, 0, {"Content-Type": "application/json"}, json_seeds["error.QECx05.json"])
http("400-key-echo", 400, 0, {"Content-Type": "application/json"},
     '{"quandl_error":{"code":"QEAx01","message":"We could not recognize your API key: \'%s\'."}}' % key)
http("200-key-echo", 200, 0, {"Content-Type": "application/json"}, '{"message":"unknown key %s"}' % key)
http("429-date", 429, 0, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT", "Content-Type": "application/json"},
     '{"quandl_error":{"code":"QELx01","message":"You have exceeded the anonymous user limit of 50 calls per day."}}')
http("503-seconds", 503, 128, {"Retry-After": "99999999999999999999"}, "")
http("401-csv-quoted", 401, 1, {"Content-Type": "text/csv"}, 'code,message\r\nQEAx02,"a ""quoted"", message"\r\n')

# Query: expressions from the README, the parser's grammar and its tests; an optional aggregate
# list after a line `--`.
queries = [
    "80 < high < 83 and 78 < low < 82",
    "80 < high < 83 and 78 < low < 82 and ticker in (FDX, AAPL) and date >= 2005-01-01",
    "close >= 1e6 or not (open between 60 and 70)",
    '"Adj. Close" > 80 and volume != 0',
    "ticker not in ('BRK.A', ZEN) or date = '2016-01-05'",
    "(true and false) or not true",
    "volume >= 9223372036854775807 or volume < -9223372036854775808",
    "split_ratio <> 1 and 2016-03-01 <= date < 2016-04-01",
    "open == close\n--\ncount, sum(close), min(volume), max(adj_close), mean(open)",
    "NOT Open <= -0.0 AND high > -inf",
    "1 < 2",
    "date between 2016-01-01 and 2016-12-31\n--\ncount(volume)",
]
for i, q in enumerate(queries):
    put("Query", f"expr-{i:02}", q)

# Arrow and Parquet: the interop fixtures as they are (1-2 KiB each, from pyarrow, Polars, DuckDB).
for path in sorted((fixtures / "interop").iterdir()):
    if path.suffix in (".arrow", ".arrows"):
        put("Arrow", path.name, path.read_bytes())
    elif path.suffix == ".parquet":
        put("Parquet", path.name, path.read_bytes())

# Inflate: the zlib-made raw DEFLATE streams of Tests/Fixtures/deflate/cases.bin up to 16 KiB
# (stored, fixed and dynamic blocks at every level and strategy), plus hand-made edge streams.
import struct, zlib, zipfile, io
blob = (fixtures / "deflate" / "cases.bin").read_bytes()
p, n = 0, 0
while p < len(blob):
    def take():
        global p
        (length,) = struct.unpack_from("<I", blob, p)
        p += 4
        p += length
        return blob[p - length:p]
    name, stream, output = take(), take(), take()
    if len(stream) <= 16384 and n < 60:
        put("Inflate", "case-%02d-" % n + name.decode().replace(" ", "-").replace("/", "-"), stream)
        n += 1
put("Inflate", "empty-fixed", bytes([0x03, 0x00]))
put("Inflate", "empty-stored", bytes([0x01, 0x00, 0x00, 0xFF, 0xFF]))
raw = zlib.compressobj(9, zlib.DEFLATED, -15)
put("Inflate", "far-distance", raw.compress(bytes(range(256)) * 160 + b"tail" + bytes(range(256))) + raw.flush())

# Zip: small archives made with Python's zipfile (stored, deflated, a directory, ZIP64 records,
# data descriptors from a non-seekable writer, a comment) and the real export fixture.
csv = (fixtures / "quandl" / "WIKI-PRICES.datatable.2014.csv").read_text().splitlines(keepends=True)
small_csv = "".join(csv[:20]).encode()


class Unseekable(io.RawIOBase):
    def __init__(self):
        self.data = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.data += b
        return len(b)


def archive(name, members, compression=zipfile.ZIP_DEFLATED, zip64=False, seekable=True, comment=b""):
    target = io.BytesIO() if seekable else Unseekable()
    with zipfile.ZipFile(target, "w", compression=compression, allowZip64=True) as z:
        z.comment = comment
        for member, data in members:
            info = zipfile.ZipInfo(member, date_time=(2014, 1, 2, 0, 0, 0))
            info.compress_type = compression
            with z.open(info, "w", force_zip64=zip64) as f:
                f.write(data)
    put("Zip", name, bytes(target.getvalue() if seekable else target.data))


archive("deflated.zip", [("WIKI_PRICES.csv", small_csv)])
archive("stored.zip", [("WIKI_PRICES.csv", small_csv)], compression=zipfile.ZIP_STORED)
archive("directory-and-two.zip", [("a/", b""), ("a/PRICES.csv", small_csv), ("b.txt", b"hello " * 40)])
archive("zip64.zip", [("WIKI_PRICES.csv", small_csv)], zip64=True)
archive("descriptors.zip", [("WIKI_PRICES.csv", small_csv), ("x.csv", b"Date,Close\n2014-01-02,1\n")], seekable=False)
archive("comment.zip", [("x.csv", b"Date,Close\n2014-01-02,1\n")], comment=b"exported")
archive("empty.zip", [])
put("Zip", "WIKI-PRICES.export.zip", (fixtures / "quandl-export" / "WIKI-PRICES.export.zip").read_bytes())
