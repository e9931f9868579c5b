#!/bin/bash
# Fetch end to end against a loopback server: `colonnade fetch` of many tickers (one request in
# flight, the default), a baseline build against a candidate build, runs alternated, medians.
# Also checks that both builds write byte-identical snapshots.
#
#   Benchmarks/fetch-overlap.sh BASELINE_COLONNADE CANDIDATE_COLONNADE [LATENCY_S] [RUNS] [TICKERS] [DAYS]
#
# LATENCY_S (default 0) is a delay the server adds before each answer, standing in for the
# network; TICKERS × DAYS (default 100 × 5,000: about 400 KB of dataset_data JSON per ticker,
# the size of a long WIKI history) are generated with the candidate's `generate --json-dir`.
# The server is Python's ThreadingHTTPServer with every body in memory. Use release builds.
set -euo pipefail
baseline=$1 candidate=$2 latency=${3:-0} runs=${4:-10} tickers=${5:-100} days=${6:-5000}
work=$(mktemp -d)
trap 'kill $server 2>/dev/null || true; rm -rf "$work"' EXIT
"$candidate" generate --tickers "$tickers" --days "$days" --seed 3 --json-dir "$work/json" >/dev/null 2>&1
cat >"$work/serve.py" <<'EOF'
import http.server, os, sys, time
root, latency = sys.argv[1], float(sys.argv[2])
bodies = {}
for name in os.listdir(root):
    with open(os.path.join(root, name), "rb") as f:
        bodies[name.split(".")[0].split("-", 1)[1]] = f.read()
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        parts = self.path.split("?")[0].split("/")
        body = bodies.get(parts[5]) if len(parts) == 7 else None
        if latency:
            time.sleep(latency)
        if body is None:
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers(); return
        self.send_response(200)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
EOF
python3 "$work/serve.py" "$work/json" "$latency" >"$work/port" &
server=$!
while [ ! -s "$work/port" ]; do sleep 0.05; done
port=$(cat "$work/port")
symbols=$(ls "$work/json" | sed 's/^WIKI-//; s/\.json$//')
bytes=$(cat "$work/json"/* | wc -c)
echo "fetch of $tickers tickers ($((bytes / 1000000)) MB of JSON), server latency ${latency}s, $runs runs each; load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$runs"); do
    for which in baseline candidate; do
        binary=${!which}
        rm -f "$work/$which.snapshot" "$work/$which.snapshot.lock"
        start=$(date +%s%N)
        # shellcheck disable=SC2086
        HOME=$work "$binary" fetch $symbols --base-url "http://127.0.0.1:$port" --snapshot "$work/$which.snapshot" --quiet
        echo "$which $(( ($(date +%s%N) - start) / 1000 ))" >>"$work/times"
    done
    cmp -s "$work/baseline.snapshot" "$work/candidate.snapshot" || { echo "run $i: the snapshots differ"; exit 1; }
done
for which in baseline candidate; do
    grep "^$which " "$work/times" | cut -d' ' -f2 | sort -n | awk -v w="$which" -v mb="$bytes" '
        { t[NR] = $1 / 1e6 }
        END { m = t[int((NR + 1) / 2)]; printf "%-9s median %.3f s (min %.3f, max %.3f), %.0f MB/s of JSON\n", w, m, t[1], t[NR], mb / 1e6 / m }'
done
echo "snapshots byte-identical in all $runs runs; load at end: $(cut -d' ' -f1-3 /proc/loadavg)"
