#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 30) and fails on any
# crash. Usage: fuzz/run-all.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-30}"
for target in $(cargo +nightly fuzz list); do
    mkdir -p "corpus/$target"
    dict=()
    case "$target" in base64_*) dict=(-dict=dict/base64.dict) ;; esac
    echo "==> $target (${secs}s)"
    # Work in a scratch copy so the committed seeds stay small.
    work="$(mktemp -d)"
    cp -r "corpus/$target/." "$work/"
    log="$work.log"
    status=0
    cargo +nightly fuzz run "$target" "$work" -- \
        -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 "${dict[@]}" \
        >"$log" 2>&1 || status=$?
    grep -E '^(#[0-9]+ +DONE|Done [0-9]+ runs|SUMMARY|thread .* panicked|==[0-9]+== ?ERROR)' "$log" || true
    if [ "$status" -ne 0 ]; then
        tail -40 "$log"
    fi
    rm -f "$log"
    rm -rf "$work"
    if [ "$status" -ne 0 ]; then
        echo "fuzz target $target failed (exit $status)"
        exit 1
    fi
done
