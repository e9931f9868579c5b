#!/usr/bin/env bash
# Builds libFuzzer targets: Tests/Fuzz/build.sh [TARGET...]  (no argument: every Tests/Fuzz/Targets/*.swift).
#
# A target is Tests/Fuzz/Targets/NAME.swift. Its first lines name the package modules it imports (a `?`
# marks one that may not exist, e.g. a module being split out; guard its import with canImport):
#
#     // fuzz-modules: DataLink ColonnadeTestSupport DataLinkFormat?
#
# The script asks SwiftPM for the module graph (`swift package describe`), so the modules those
# depend on come along, and each module is compiled from exactly the sources SwiftPM would compile
# (whatever folder they live in), once, as one instrumented object (-sanitize=fuzzer,address,
# -enable-testing so targets may `@testable import`). Modules are rebuilt when their sources
# change. Output: .build/fuzz/bin/NAME (inside the package's .build, so never committed and
# removed by `swift package clean`).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
out=$root/.build/fuzz/bin
mkdir -p "$out/modules"

if ! command -v swiftc >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swiftc ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi

# Flags shared by modules and targets. COLONNADE_INTERNAL_CHECKS turns on the engine's expensive
# invariant checks (sorted dates per ticker, index tiling, mask padding): a broken invariant traps.
# -package-name: the modules share `package` declarations, as under SwiftPM.
flags=(-O -sanitize=fuzzer,address -parse-as-library -enable-testing -DCOLONNADE_INTERNAL_CHECKS -g -package-name colonnade)

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for f in Tests/Fuzz/Targets/*.swift; do targets+=("$(basename "$f" .swift)"); done
fi

describe=$out/describe.json
if [ ! -s "$describe" ] || [ Package.swift -nt "$describe" ] || [ -n "$(find Sources Tests -newer "$describe" -type d -print -quit)" ]; then
    swift package describe --type json >"$describe.tmp"
    mv "$describe.tmp" "$describe"
fi

# Prints the modules `wanted` needs, dependencies first, one "NAME<TAB>PATH<TAB>DEPS<TAB>SOURCES…"
# line each (DEPS: comma-separated direct dependencies, or "-").
module_plan() {
    python3 - "$describe" "$@" <<'EOF'
import json, sys
targets = {t["name"]: t for t in json.load(open(sys.argv[1]))["targets"]}
order, seen = [], set()
def visit(name):
    if name in seen: return
    if name not in targets: sys.exit(f"fuzz: no module named {name} in Package.swift")
    seen.add(name)
    for dep in targets[name].get("target_dependencies", []): visit(dep)
    order.append(name)
for name in sys.argv[2:]:
    if name.endswith("?"):  # optional: a module that may not exist (yet, or any more)
        if name[:-1] in targets: visit(name[:-1])
    else:
        visit(name)
for name in order:
    t = targets[name]
    deps = ",".join(t.get("target_dependencies", [])) or "-"
    print("\t".join([name, t["path"], deps] + sorted(t["sources"])))
EOF
}

build_module() {  # NAME PATH DEPS SOURCES…
    local name=$1 path=$2 deps=$3; shift 3
    local sources=() s d
    for s in "$@"; do sources+=("$path/$s"); done
    # The stamp covers the flags, the compiler, the sources and the dependencies' stamps.
    local stamp
    stamp=$( { printf '%s\n' "${flags[@]}"; swiftc --version 2>&1; printf '%s\n' "${sources[@]}"; cat "${sources[@]}"; \
               for d in ${deps//,/ }; do [ "$d" = - ] || cat "$out/modules/$d.stamp"; done; } | sha256sum | cut -c1-16)
    if [ -f "$out/modules/$name.o" ] && [ "$(cat "$out/modules/$name.stamp" 2>/dev/null)" = "$stamp" ]; then
        return
    fi
    echo "fuzz: compiling module $name (${#sources[@]} files)" >&2
    # Swift 6 language mode, as SwiftPM compiles them (tools version 6.x).
    swiftc "${flags[@]}" -swift-version 6 -module-name "$name" -wmo -I "$out/modules" \
        -emit-module -emit-module-path "$out/modules/$name.swiftmodule" \
        -c "${sources[@]}" -o "$out/modules/$name.o"
    echo "$stamp" >"$out/modules/$name.stamp"
}

for target in "${targets[@]}"; do
    file=Tests/Fuzz/Targets/$target.swift
    [ -f "$file" ] || { echo "fuzz: no target $file" >&2; exit 2; }
    wanted=$(sed -n 's|^// fuzz-modules:||p' "$file" | head -n 1)
    [ -n "$wanted" ] || { echo "fuzz: $file lacks a '// fuzz-modules: …' line" >&2; exit 2; }
    objects=()
    while IFS=$'\t' read -r -a line; do
        build_module "${line[@]}"
        objects+=("$out/modules/${line[0]}.o")
    done < <(module_plan $wanted)
    binary=$out/$target
    if [ -x "$binary" ] && [ -z "$(find "$file" Tests/Fuzz/Targets/Support "${objects[@]}" -newer "$binary" -print -quit 2>/dev/null)" ]; then
        continue
    fi
    echo "fuzz: linking $target" >&2
    support=()
    [ -d Tests/Fuzz/Targets/Support ] && while IFS= read -r s; do support+=("$s"); done < <(find Tests/Fuzz/Targets/Support -name '*.swift' | sort)
    # gold warns once per ASan helper symbol ("Cannot export local symbol"); those lines are noise.
    swiftc "${flags[@]}" -module-name "Fuzz$target" -I "$out/modules" "$file" "${support[@]}" "${objects[@]}" -o "$binary" \
        2> >(grep -v "Cannot export local symbol" >&2)
done
