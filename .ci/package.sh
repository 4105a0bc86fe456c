#!/usr/bin/env bash
# Publishability: every library crate is packaged, and each `.crate` is
# built and tested outside the workspace, from what it ships alone.
#
# Why not `cargo publish --dry-run` per crate: its verification resolves a
# crate's mdu dependencies on crates.io, where the siblings of this version
# are not (or, worse, are someone else's), and `[patch]` in the workspace
# does not reach the packaged manifest. `cargo package --workspace`
# verifies through a local overlay of the siblings, but builds each library
# only, never its tests. So: package without verification, unpack every
# `.crate` into a scratch directory outside the workspace, make the
# unpacked crates one scratch workspace whose `[patch.crates-io]` points
# each mdu dependency at its unpacked sibling (what crates.io will hold
# once they are published), and build and run every crate's library and
# integration tests there. One `cargo test` over the scratch workspace
# builds each crate once (one `-p` run per crate took three times as long
# on 2 cores, rebuilding the shared crates for each feature set); every
# crate's own features are on (`--all-features`) either way.
#
# What a `.crate` drops (path-only dev-dependencies: mdu-testkit, a crate's
# dependency on itself, mdu-aes's doc examples over mdu-xts and mdu-cbc)
# and the tests that need it (`exclude` in each Cargo.toml) stay
# workspace-only. Doc tests do not run here: the workspace runs them.
#
# Third-party crates come from the workspace's Cargo.lock and, through the
# shared target directory, from the builds of the earlier CI steps (the
# same profile: the workspace's `[profile.test]`).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# The library crates, in an order in which they could be published.
crates=(mdu-core mdu-platform mdu-aes mdu-xts mdu-cbc mdu-hctr2 mdu-adiantum mdu-dmcrypt mdu-io mdu-inplace
        mdu-luks2 mdu-verity mdu-base64 mdu-fscrypt mdu)
version=$(cargo metadata --no-deps --format-version 1 \
    | python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "mdu"))')
target=${CARGO_TARGET_DIR:-$root/target}

args=()
for c in "${crates[@]}"; do args+=(-p "$c"); done
# --allow-dirty: CI runs on a checkout, and a local run should not need a
# commit first; the file lists are the same.
cargo package --no-verify --allow-dirty "${args[@]}"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/mdu-package.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
{
    echo '[workspace]'
    echo 'resolver = "3"'
    echo 'members = ['
    for c in "${crates[@]}"; do echo "    \"$c-$version\","; done
    echo ']'
    echo
    echo '[patch.crates-io]'
    for c in "${crates[@]}"; do echo "$c = { path = \"$c-$version\" }"; done
    echo
    echo '[profile.test]'
    echo 'opt-level = 3'
} > "$scratch/Cargo.toml"
for c in "${crates[@]}"; do
    tar -xzf "$target/package/$c-$version.crate" -C "$scratch"
    for f in LICENSE-MIT LICENSE-APACHE README.md; do
        test -s "$scratch/$c-$version/$f" || { echo "$c: $f is not in the package"; exit 1; }
    done
done
cp Cargo.lock "$scratch/"
# A `.crate` stores one fixed modification time for every file, and the
# scratch paths are the same from run to run, so a target directory that
# built an earlier version would take the old build as up to date: the
# unpacked files get the time of this run.
find "$scratch" -type f -exec touch {} +

cd "$scratch"
start=$SECONDS
# --all-features: the tests that need a feature (`required-features`,
# `cfg(feature = ...)`) run too.
if ! CARGO_TARGET_DIR=$target cargo test --workspace --all-features --lib --tests \
        > "$scratch/test.log" 2>&1; then
    cat "$scratch/test.log"
    echo "the tests of the packages failed"
    exit 1
fi
grep -E '^ *(Running|test result)' "$scratch/test.log" | sed -e 's/^ *//' -e "s|($target/[^)]*/\([^/)]*\)-[0-9a-f]*)|(\1)|"
echo "${#crates[@]} packages built and tested outside the workspace in $((SECONDS - start))s"
