#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 30) and fails on any
# crash. Usage: fuzz/run-all.sh [SECONDS]
#
# The targets are built once (one cargo build for all of them), then run
# FUZZ_JOBS at a time (default: the number of CPUs), each fuzzer on its own
# core for its SECONDS: the same fuzzing per target as one after the
# other, in a fraction of the wall time. Each target's summary is printed
# in order once its batch is done.
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-30}"
jobs="${FUZZ_JOBS:-$(nproc)}"
[ "$jobs" -ge 1 ] || jobs=1

cargo +nightly fuzz build

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# Runs one target in a scratch copy of its corpus (so the committed seeds
# stay small); its log in $scratch/$target.log, its exit status in
# $scratch/$target.status.
run_one() {
    local target=$1 work status=0
    mkdir -p "corpus/$target"
    local dict=()
    case "$target" in base64_*) dict=(-dict=dict/base64.dict) ;; esac
    work="$scratch/$target.corpus"
    mkdir -p "$work"
    cp -r "corpus/$target/." "$work/"
    cargo +nightly fuzz run "$target" "$work" -- \
        -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 "${dict[@]}" \
        >"$scratch/$target.log" 2>&1 || status=$?
    echo "$status" >"$scratch/$target.status"
}

# Prints a finished target's summary; fails on a crash.
report() {
    local target=$1 status
    status=$(cat "$scratch/$target.status")
    echo "==> $target (${secs}s)"
    grep -E '^(#[0-9]+ +DONE|Done [0-9]+ runs|SUMMARY|thread .* panicked|==[0-9]+== ?ERROR)' \
        "$scratch/$target.log" || true
    if [ "$status" -ne 0 ]; then
        tail -40 "$scratch/$target.log"
        echo "fuzz target $target failed (exit $status)"
        return 1
    fi
}

mapfile -t targets < <(cargo +nightly fuzz list)
echo "${#targets[@]} targets, ${secs}s each, $jobs at a time"
failed=0
for ((i = 0; i < ${#targets[@]}; i += jobs)); do
    batch=("${targets[@]:i:jobs}")
    for target in "${batch[@]}"; do
        run_one "$target" &
    done
    wait
    for target in "${batch[@]}"; do
        report "$target" || failed=1
    done
    [ "$failed" -eq 0 ] || exit 1
done
