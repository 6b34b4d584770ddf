#!/usr/bin/env bash
# fuzz_coverage.sh - line and region coverage of src/io/resp_parse.c reached by
# the parser fuzz target: builds fuzz/fuzz_resp_parse.c with clang's
# source-based coverage (-fprofile-instr-generate -fcoverage-mapping) next to
# libFuzzer, replays the seed corpus (fuzz/corpus/resp_parse), fuzzes for
# SECONDS more from a scratch copy of it, and prints llvm-cov's report.
#
# Usage: scripts/fuzz_coverage.sh [SECONDS]   (default 30; 0 = corpus only)
# Needs clang and llvm-profdata/llvm-cov (the -14 versions are used when present).
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_TO_RUN=${1:-30}
pick() { if command -v "$1-14" >/dev/null 2>&1; then echo "$1-14"; else echo "$1"; fi; }
CLANG=${CLANG:-clang}
PROFDATA=$(pick llvm-profdata)
COV=$(pick llvm-cov)
OUT=build/fuzz-cov
mkdir -p "$OUT"

"$CLANG" -std=c11 -D_GNU_SOURCE -O1 -g -Iinclude \
    -fsanitize=fuzzer -fprofile-instr-generate -fcoverage-mapping \
    -o "$OUT/fuzz_resp_parse" fuzz/fuzz_resp_parse.c src/io/resp_parse.c

rm -f "$OUT"/*.profraw
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r fuzz/corpus/resp_parse/. "$work/"

# 1. the seed corpus alone, 2. the corpus plus SECONDS of fuzzing
LLVM_PROFILE_FILE="$OUT/corpus.profraw" "$OUT/fuzz_resp_parse" -runs=0 "$work" >"$OUT/corpus.log" 2>&1
"$PROFDATA" merge -sparse "$OUT/corpus.profraw" -o "$OUT/corpus.profdata"
echo "== src/io/resp_parse.c, seed corpus only"
"$COV" report "$OUT/fuzz_resp_parse" -instr-profile="$OUT/corpus.profdata" src/io/resp_parse.c | tail -n 1

if [ "$SECONDS_TO_RUN" -gt 0 ]; then
    LLVM_PROFILE_FILE="$OUT/fuzz.profraw" "$OUT/fuzz_resp_parse" -max_total_time="$SECONDS_TO_RUN" \
        "$work" >"$OUT/fuzz.log" 2>&1
    "$PROFDATA" merge -sparse "$OUT/corpus.profraw" "$OUT/fuzz.profraw" -o "$OUT/all.profdata"
    echo "== src/io/resp_parse.c, seed corpus + ${SECONDS_TO_RUN}s of fuzzing"
    "$COV" report "$OUT/fuzz_resp_parse" -instr-profile="$OUT/all.profdata" src/io/resp_parse.c
    echo "(uncovered lines: $COV show $OUT/fuzz_resp_parse -instr-profile=$OUT/all.profdata src/io/resp_parse.c -show-line-counts-or-regions)"
fi
