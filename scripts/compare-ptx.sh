#!/usr/bin/env bash
# Compares the PTX of the CUDA translation units that include the engines
# (include/gpukit/primitives/cuda/) between a base commit and the working tree, modulo names:
# moving device code between headers and namespaces changes mangled names, function order and
# debug/line info, never an instruction. Usage:
#   scripts/compare-ptx.sh [BASE] [TU-REGEX]
# BASE defaults to main; TU-REGEX (a grep -E pattern over source paths) overrides the selection
# of translation units (default: every .cu file of the build whose dependencies include a header
# under include/gpukit/primitives/cuda/, at the base or in the working tree).
# Needs a configured build (BUILD, default build/release) for its compile_commands.json.
# Prints one line per translation unit, "identical modulo names" or the kernels and functions
# that differ (demangled, base and working-tree names), and exits 1 when any differs.
# KEEP=DIR keeps the PTX files (DIR/base, DIR/head) for a closer look; PTX_CACHE=DIR keeps the
# base's PTX under DIR/<commit> and reuses it on the next run against the same base.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
base=${1:-main}
pattern=${2:-}
build=${BUILD:-build/release}
commands="$build/compile_commands.json"
[ -f "$commands" ] || { echo "compare-ptx: no $commands (configure the build first)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tree" "$work/base" "$work/head"
git archive "$base" | tar -x -C "$work/tree"

# Each .cu entry as "source<TAB>command" (the command with -c/-o replaced by -ptx -o @OUT@).
python3 - "$commands" > "$work/units" <<'EOF'
import json, shlex, sys
for entry in json.load(open(sys.argv[1])):
    source = entry["file"]
    if not source.endswith(".cu"):
        continue
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a == "-c":
            continue
        out.append(a)
    out += ["-ptx", "-o", "@OUT@"]
    print(source + "\t" + entry["directory"] + "\t" + shlex.join(out))
EOF

selected=()
while IFS=$'\t' read -r source directory command; do
  relative=${source#"$root"/}
  if [ -n "$pattern" ]; then
    echo "$relative" | grep -Eq "$pattern" && selected+=("$relative")
    continue
  fi
  deps_command=${command/-ptx -o @OUT@/-M}
  if (cd "$directory" && eval "$deps_command" 2>/dev/null) | grep -q "include/gpukit/primitives/cuda/"; then
    selected+=("$relative")
    continue
  fi
  if [ -f "$work/tree/$relative" ]; then
    base_deps=${deps_command//"$root"/"$work/tree"}
    if (cd "$directory" && eval "$base_deps" 2>/dev/null) | grep -q "include/gpukit/primitives/cuda/"; then
      selected+=("$relative")
    fi
  fi
done < "$work/units"

status=0
for relative in "${selected[@]}"; do
  line=$(grep -F "$root/$relative"$'\t' "$work/units")
  directory=$(echo "$line" | cut -f2)
  command=$(echo "$line" | cut -f3)
  name=${relative//\//_}
  head_ptx="$work/head/$name.ptx"
  base_ptx="$work/base/$name.ptx"
  # The base first (cached when asked), so that a working tree that does not build yet still
  # fills the cache.
  cached=${PTX_CACHE:+$PTX_CACHE/$(git rev-parse "$base")/$name.ptx}
  if [ ! -f "$work/tree/$relative" ]; then
    :
  elif [ -n "$cached" ] && [ -f "$cached" ]; then
    cp "$cached" "$base_ptx"
  else
    base_command=${command//"$root"/"$work/tree"}
    if ! (cd "$directory" && eval "${base_command/@OUT@/$base_ptx}") > "$work/base/$name.log" 2>&1; then
      echo "$relative: does not compile at $base"; status=1; continue
    fi
    if [ -n "$cached" ]; then mkdir -p "$(dirname "$cached")" && cp "$base_ptx" "$cached"; fi
  fi
  if ! (cd "$directory" && eval "${command/@OUT@/$head_ptx}") > "$work/head/$name.log" 2>&1; then
    echo "$relative: does not compile in the working tree"; cat "$work/head/$name.log"; status=1; continue
  fi
  if [ ! -f "$base_ptx" ]; then
    echo "$relative: new (no base to compare)"; continue
  fi
  if ! python3 "$root/scripts/ptx-diff.py" "$base_ptx" "$head_ptx" "$relative"; then
    status=1
  fi
done
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp -r "$work/base" "$work/head" "$KEEP"/; fi
exit $status
