#!/usr/bin/env bash
# Builds one libFuzzer target of fuzz/ with clang and runs it for the given number of seconds.
#
#   scripts/run-fuzz.sh <target> <seconds>      e.g. scripts/run-fuzz.sh npy_fuzz 20
#
# Targets: the executables of fuzz/CMakeLists.txt (option_book_fuzz, npy_fuzz). Build directory:
# ${BUILD_DIR:-build}/fuzz. The fuzzer runs over a fresh copy of the target's seed corpus
# (fuzz/corpus/<target without _fuzz>, e.g. fuzz/corpus/npy), so the checked-in corpus is never
# modified; a crashing input is saved under <build>/fuzz/artifacts/<target>-.
# Exit status: 0 no finding, 77 skipped (no clang++ or no libFuzzer runtime), other: a finding or
# a build failure (2: usage).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [[ $# -ne 2 || ! $1 =~ ^[a-z0-9_]+_fuzz$ || ! $2 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 <target> <seconds>   (target: a fuzz/<name>_fuzz.cpp, e.g. npy_fuzz)" >&2
  exit 2
fi
target=$1
seconds=$2
corpus_name=${target%_fuzz}
if [[ ! -f $root/fuzz/$target.cpp || ! -d $root/fuzz/corpus/$corpus_name ]]; then
  echo "run-fuzz: unknown target $target (needs fuzz/$target.cpp and fuzz/corpus/$corpus_name/)" >&2
  exit 2
fi

build_root=${BUILD_DIR:-build}
[[ $build_root = /* ]] || build_root=$PWD/$build_root
build=$build_root/fuzz

if ! command -v clang++ > /dev/null || ! command -v clang > /dev/null; then
  echo "run-fuzz: skipped: clang/clang++ not found (libFuzzer needs clang)" >&2
  exit 77
fi

# libFuzzer ships separately from the compiler on Debian (libclang-rt-<version>-dev): probe it.
probe_dir=$(mktemp -d)
trap 'rm -rf "$probe_dir"' EXIT
cat > "$probe_dir/probe.cpp" << 'EOF'
#include <cstddef>
#include <cstdint>
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }
EOF
if ! clang++ -fsanitize=fuzzer,address,undefined "$probe_dir/probe.cpp" -o "$probe_dir/probe" \
    > "$probe_dir/probe.log" 2>&1; then
  echo "run-fuzz: skipped: clang++ cannot link -fsanitize=fuzzer (install libclang-rt-dev):" >&2
  cat "$probe_dir/probe.log" >&2
  exit 77
fi

CC=clang CXX=clang++ cmake -S "$root/fuzz" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build "$build" -j2 --target "$target"

corpus=$build/corpus/$corpus_name
rm -rf "$corpus"
mkdir -p "$corpus" "$build/artifacts"
cp "$root"/fuzz/corpus/"$corpus_name"/* "$corpus"/

# detect_leaks: a leak is a finding too. -timeout: one input taking 10 s is a hang.
# -rss_limit_mb: far above what any input of -max_len bytes needs.
# -error_exitcode / -timeout_exitcode: libFuzzer's default for a finding is 77, which ctest would
# read as "skipped" (SKIP_RETURN_CODE 77).
echo "run-fuzz: fuzzing $target for ${seconds}s (corpus copy in $corpus)"
status=0
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
  "$build/$target" "$corpus" \
  -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -error_exitcode=1 -timeout_exitcode=1 \
  -artifact_prefix="$build/artifacts/$target-" -print_final_stats=1 || status=$?
if [[ $status -ne 0 ]]; then
  echo "run-fuzz: FINDING (fuzzer exit status $status); reproducer(s) in $build/artifacts/:" >&2
  ls -l "$build/artifacts/" >&2 || true
  echo "run-fuzz: replay with: $build/$target <file>" >&2
  exit 1
fi
