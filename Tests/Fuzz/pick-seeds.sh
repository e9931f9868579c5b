#!/usr/bin/env bash
# Picks a few inputs from a run's corpus to keep as seeds: Tests/Fuzz/pick-seeds.sh TARGET [COUNT] [--copy]
#
# Merges .build/fuzz/work/TARGET/corpus into a copy of the committed seeds with libFuzzer's
# `-merge=1`, reads the per-input coverage from its control file, and chooses greedily the input
# that adds the most coverage edges over the seeds and the inputs already chosen (the smaller on a
# tie), COUNT times (default 5), stopping when none adds an edge. Prints each choice with its size
# and the edges covered so far; with --copy, copies them to Tests/Fuzz/Corpus/TARGET as
# corpus-YYYYMMDD-SHA8 (seeds.py and FUZZ_MAKE_SEEDS never overwrite or remove those names).
# Needs the target built (run.sh does it) and a corpus from a run.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${1:?usage: pick-seeds.sh TARGET [COUNT] [--copy]}
count=${2:-5}
copy=${3:-}
binary=.build/fuzz/bin/$target
corpus=.build/fuzz/work/$target/corpus
seeds=Tests/Fuzz/Corpus/$target
[ -x "$binary" ] || { echo "pick-seeds: build $binary first (Tests/Fuzz/build.sh $target)" >&2; exit 2; }
[ -d "$corpus" ] || { echo "pick-seeds: no corpus in $corpus (run Tests/Fuzz/run.sh $target first)" >&2; exit 2; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/out"
cp "$seeds"/* "$scratch/out/"
options=()
if [ -f "Tests/Fuzz/Corpus/$target.options" ]; then
    while IFS= read -r line; do [ -n "$line" ] && [ "${line#\#}" = "$line" ] && options+=("$line"); done <"Tests/Fuzz/Corpus/$target.options"
fi
# The control file lists the inputs (the output directory's, i.e. the seeds', first) and the
# coverage edges (COV lines) of each.
SWIFT_BACKTRACE=${SWIFT_BACKTRACE:-enable=no} nice -n 19 "$binary" -merge=1 "${options[@]}" \
    -merge_control_file="$scratch/control" "$scratch/out" "$corpus" >"$scratch/merge.log" 2>&1 \
    || { tail -n 20 "$scratch/merge.log" >&2; exit 1; }

python3 - "$scratch/control" "$count" "$seeds" "$copy" <<'EOF'
import hashlib, os, shutil, sys, time
control, count, seeds, copy = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "--copy"
lines = open(control).read().split("\n")
files, first = int(lines[0]), int(lines[1])
names = lines[2:2 + files]
edges = {}
for line in lines[2 + files:]:
    parts = line.split()
    if parts and parts[0] == "COV":
        edges.setdefault(int(parts[1]), set()).update(parts[2:])
have = set().union(*(edges.get(i, set()) for i in range(first)))
print(f"seeds: {first} files, {len(have)} edges; corpus: {files - first} files, "
      f"{len(set().union(have, *edges.values()))} edges with the seeds")
chosen = []
candidates = list(range(first, files))
for _ in range(count):
    if not candidates:
        break
    best = max(candidates, key=lambda i: (len(edges.get(i, set()) - have), -os.path.getsize(names[i])))
    gain = len(edges.get(best, set()) - have)
    if gain == 0:
        break
    have |= edges[best]
    candidates.remove(best)
    chosen.append(names[best])
    print(f"{names[best]}: {os.path.getsize(names[best])} bytes, +{gain} edges, {len(have)} in all")
if copy:
    day = time.strftime("%Y%m%d", time.gmtime())
    for name in chosen:
        data = open(name, "rb").read()
        out = os.path.join(seeds, f"corpus-{day}-{hashlib.sha1(data).hexdigest()[:8]}")
        shutil.copyfile(name, out)
        print("copied", out)
EOF
