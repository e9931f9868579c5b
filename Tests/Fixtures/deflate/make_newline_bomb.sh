#!/usr/bin/env bash
# newline-bomb.zip: a 71 KB zip whose one member, PRICES.csv, inflates to 70 MiB + 40 bytes (a
# ratio of about 1,030:1, past the zip-bomb guard's 200 × and its 64 MiB floor): a valid datatable
# CSV of one row followed by 70 MiB of newlines. Made once with Info-ZIP zip 3.0 (-9).
set -euo pipefail
dir="$(mktemp -d)"
python3 -c "
with open('$dir/PRICES.csv', 'w') as f:
    f.write('ticker,date,close\nAAPL,2014-01-02,553.13\n')
    f.write('\n' * (70 << 20))
"
(cd "$dir" && zip -q -9 newline-bomb.zip PRICES.csv)
mv "$dir/newline-bomb.zip" "$(dirname "$0")/newline-bomb.zip"
rm -rf "$dir"
