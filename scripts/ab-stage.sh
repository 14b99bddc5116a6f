#!/usr/bin/env bash
# Builds `bench` at several git revisions for the `ab` phase of gpu-run.sh, after
# scripts/gpu-stage.sh (which empties .gpu):
#   bash scripts/ab-stage.sh [--test NAME]... [-- BENCH_ARGS...] NAME=REV...
# e.g. bash scripts/ab-stage.sh --test segmented -- --log2 26 base=main mine=my-branch
# Each NAME=REV (any revision git knows: a branch, a commit, HEAD) gives .gpu/ab/bin_NAME (stripped)
# and .gpu/ab/bench_NAME, a wrapper that runs it with BENCH_ARGS after the mode's own; each
# --test NAME also gives .gpu/ab/NAME-TEST.gz, that revision's test binary (gunzip it there and
# run it with REDUCE_REQUIRE_GPU=1). Revisions are built in a temporary worktree, one after
# another, with one target folder (target/ab), so that only what differs is rebuilt.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
tests=()
bench_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --test) tests+=("$2"); shift 2 ;;
    --) shift; while [ $# -gt 0 ] && [[ "$1" != *=* ]]; do bench_args+=("$1"); shift; done ;;
    *=*) break ;;
    *) echo "ab-stage: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "ab-stage: no NAME=REV given" >&2; exit 2; }
root=$PWD
target=$root/target/ab
mkdir -p .gpu/ab
tree=$(mktemp -d)
trap 'git worktree remove --force "$tree/w" >/dev/null 2>&1 || true; rm -rf "$tree"' EXIT
for spec in "$@"; do
  name=${spec%%=*}
  rev=${spec#*=}
  git worktree add -q --detach "$tree/w" "$rev"
  (cd "$tree/w" && CARGO_TARGET_DIR=$target cargo build --release -q -p reduce-bench)
  strip -o ".gpu/ab/bin_$name" "$target/release/bench"
  extra=""
  [ ${#bench_args[@]} -eq 0 ] || extra=$(printf ' %q' "${bench_args[@]}")
  printf '#!/bin/sh\nexec "$(dirname "$0")/bin_%s" "$@"%s\n' "$name" "$extra" > ".gpu/ab/bench_$name"
  chmod +x ".gpu/ab/bench_$name"
  for t in "${tests[@]+"${tests[@]}"}"; do
    bin=$(cd "$tree/w" && CARGO_TARGET_DIR=$target cargo test --release -q -p reduce-tests --test "$t" --no-run \
      --message-format=json | python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable"): print(m["executable"])' | tail -1)
    strip -o "$tree/$t" "$bin"
    gzip -c "$tree/$t" > ".gpu/ab/$name-$t.gz"
  done
  git worktree remove --force "$tree/w"
  echo "ab-stage: $name = $(git rev-parse --short "$rev")"
done
