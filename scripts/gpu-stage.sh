#!/usr/bin/env bash
# Builds, here (no GPU needed), every binary the GPU machine runs and stages it in .gpu/
# (ignored by git), with the device-side script and the CUB/PyTorch anchors (.gpu/anchors/).
# Then, with the device tool:  run  command="bash .gpu/gpu-run.sh tests plain"  carry=[".gpu"]
# (REDUCE_STAGE_FUZZ=0: without the derive fuzzer's shards, for runs without the fuzz phase;
# REDUCE_STAGE_TESTS="scans views": only those test binaries; REDUCE_STAGE_CLUSTER=0: without the
# several-GPU binaries. The device tool carries at most 64 MiB, and everything staged is ~100 MB.)
# Honours CARGO_TARGET_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
release="${CARGO_TARGET_DIR:-target}/release"
rm -rf .gpu
mkdir -p .gpu/tests .gpu/bin

cargo test --workspace --release --no-run --message-format=json 2>.gpu/build.log | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["name"], m["executable"])
' > .gpu/test-list || { grep -E '^(error|warning)' -A8 .gpu/build.log; exit 1; }
while read -r name exe; do
  # trybuild needs cargo, and the proc-macro crate's own tests link the compiler's libraries:
  # neither is on the GPU machine, and neither touches a GPU. Both run in CI.
  case "$name" in derive_ui|reduce_macros) continue ;; esac
  if [ -n "${REDUCE_STAGE_TESTS:-}" ]; then
    case " $REDUCE_STAGE_TESTS " in *" $name "*) ;; *) continue ;; esac
  fi
  cp "$exe" ".gpu/tests/$name"
done < .gpu/test-list
for name in ${REDUCE_STAGE_TESTS:-}; do
  [ -f ".gpu/tests/$name" ] || [ -f ".gpu/tests/$name.gz" ] || echo "warning: REDUCE_STAGE_TESTS names $name, which is no test binary"
done
cargo build --release -p reduce-bench --bin bench
cargo build --release -p reduce-cuda --example quickstart --example interop
cp "$release/bench" .gpu/bin/
cp "$release/examples/quickstart" "$release/examples/interop" .gpu/bin/

# More than one GPU (feature nccl; libnccl is loaded at run time, so it builds here): the
# cluster tests, reduce-cuda's library tests with the feature, the bench and the example.
mkdir -p .gpu/cluster
[ "${REDUCE_STAGE_CLUSTER:-1}" = 0 ] || for target in "-p reduce-tests --features nccl --test cluster" "-p reduce-cuda --features nccl --lib"; do
  # shellcheck disable=SC2086
  cargo test --release $target --no-run --message-format=json 2>>.gpu/build.log | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["name"], m["executable"])
' >> .gpu/cluster-test-list || { grep -E '^(error|warning)' -A8 .gpu/build.log; exit 1; }
done
if [ "${REDUCE_STAGE_CLUSTER:-1}" != 0 ]; then
  while read -r name exe; do
    cp "$exe" ".gpu/cluster/$name"
  done < .gpu/cluster-test-list
  cargo build --release -p reduce-bench --features nccl --bin bench_cluster
  cargo build --release -p reduce-cuda --features nccl --example multi_gpu
  cp "$release/bench_cluster" "$release/examples/multi_gpu" .gpu/cluster/
fi

find .gpu/tests .gpu/bin .gpu/cluster -type f -exec strip {} +
# Compressed (a third of their size): every test binary together is past the 64 MiB the device
# tool carries; the tests phase decompresses them on the GPU machine.
find .gpu/tests -type f ! -name '*.gz' -exec gzip -9 -f {} +
cp scripts/gpu-run.sh .gpu/
mkdir -p .gpu/anchors
cp reduce-bench/anchors/* .gpu/anchors/
# The derive fuzzer's GPU run: 10^4 programs in 10 shards of 10^3 (rustc's time grows faster than
# linearly with the programs of one crate), stripped and compressed (mostly CUDA text).
# REDUCE_STAGE_FUZZ=0 skips them (the longest part of staging) when the fuzz phase will not run.
mkdir -p .gpu/fuzz
shards="0 1 2 3 4 5 6 7 8 9"
[ "${REDUCE_STAGE_FUZZ:-1}" = 0 ] && shards=""
for k in $shards; do
  FUZZ_FIRST=$((k * 1000)) FUZZ_PROGRAMS=1000 cargo build --release -p fuzz-derive --bin fuzz 2>>.gpu/build.log \
    || { grep -E '^(error|warning)' -A8 .gpu/build.log; exit 1; }
  strip -o ".gpu/fuzz/fuzz-$k" "$release/fuzz"
  gzip -9 -f ".gpu/fuzz/fuzz-$k"
done
for f in cub_anchor.cu torch_anchor.py; do
  [ -f "../shared/anchors/$f" ] && cp "../shared/anchors/$f" .gpu/anchors/
done
# CCCL headers newer than the GPU machine's toolkit's (CUDA 13.0 ships CCCL 3.0; CUB's
# gpu_to_gpu determinism, which the portable phase's anchor measures, needs 3.1 or later): the
# headers of the cuda-cccl wheel (CCCL 3.6), downloaded once into the cache, packed into
# .gpu/cccl.tgz. REDUCE_STAGE_CCCL=0 skips them, as does a failed download (the anchor then
# runs without gpu_to_gpu).
if [ "${REDUCE_STAGE_CCCL:-1}" != 0 ]; then
  cccl="${XDG_CACHE_HOME:-$HOME/.cache}/reduce-ci/cuda-cccl-1.2.1"
  if [ ! -d "$cccl/include/cub" ] && mkdir -p "$cccl" \
      && pip download --quiet --no-deps --dest "$cccl" cuda-cccl==1.2.1; then
    python3 - "$cccl" <<'PY'
import pathlib, sys, zipfile
dest = pathlib.Path(sys.argv[1])
prefix = "cuda/cccl/headers/include/"
with zipfile.ZipFile(next(dest.glob("cuda_cccl-*.whl"))) as wheel:
    for name in wheel.namelist():
        if name.startswith(prefix) and not name.endswith("/") and not name.endswith(".py"):
            out = dest / "include" / name[len(prefix):]
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(wheel.read(name))
PY
  fi
  if [ -d "$cccl/include/cub" ]; then
    tar czf .gpu/cccl.tgz -C "$cccl" include
  else
    echo "no CCCL headers staged: the portable phase's anchor runs without gpu_to_gpu"
  fi
fi
du -sh .gpu
# The device tool carries at most 64 MiB with the tracked files (a few MB): warn from 58.
[ "$(du -sm .gpu | cut -f1)" -le 58 ] \
  || echo "warning: .gpu is near or over the 64 MiB the device tool carries with the tree: REDUCE_STAGE_TESTS, REDUCE_STAGE_FUZZ=0, REDUCE_STAGE_CLUSTER=0"
