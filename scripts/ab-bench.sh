#!/usr/bin/env bash
# Side-by-side benchmark of two source trees on one GPU: builds `gpukit` from BASE_DIR (a copy of an
# older revision, e.g. `git archive d9fc091 | tar -x -C .deps/base`) and from this tree, then runs
# `gpukit bench CASE --json` alternately, RUNS times each, so that both builds see the same clocks
# and neighbours. Compare with scripts/compare_results.py CASE-base-I.json CASE-new-I.json.
# Usage: scripts/ab-bench.sh BASE_DIR RUNS CASE...   Output: $OUT/ab/ (JSON per run, ab.txt)
set -uo pipefail
base_dir=$1 runs=$2; shift 2
out=${OUT:-/tmp/out}/ab; mkdir -p "$out"
opts="-G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUKIT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DGPUKIT_BUILD_TESTS=OFF"
for v in base new; do
  src=$([ $v = base ] && echo "$base_dir" || echo .)
  cmake -S "$src" -B build/ab-$v $opts >/dev/null &&
    cmake --build build/ab-$v -j"$(nproc)" --target gpukit >"$out/build-$v.log" 2>&1 ||
    { tail -30 "$out/build-$v.log"; exit 1; }
done
for i in $(seq "$runs"); do for v in base new; do for c in "$@"; do
  echo "== run $i $v $c" >>"$out/ab.txt"
  build/ab-$v/apps/gpukit/gpukit bench "$c" --device cuda --json "$out/$c-$v-$i.json" >>"$out/ab.txt" 2>&1
done; done; done
