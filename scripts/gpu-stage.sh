#!/usr/bin/env bash
# Builds, here (no GPU needed), every binary the GPU machine runs and stages it in .gpu/
# (ignored by git), with the device-side script and the CUB/PyTorch anchors. Then, with the
# device tool:  run  command="bash .gpu/gpu-run.sh tests bench"  carry=[".gpu"]
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .git/info
grep -qxF '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
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
  cp "$exe" ".gpu/tests/$name"
done < .gpu/test-list
cargo build --release --bin bench --example quickstart --example interop
cp target/release/bench .gpu/bin/
cp target/release/examples/quickstart target/release/examples/interop .gpu/bin/
strip .gpu/tests/* .gpu/bin/*
cp scripts/gpu-run.sh scripts/cub_sweep.cu scripts/torch_seg.py .gpu/
for f in cub_anchor.cu torch_anchor.py; do
  [ -f "../shared/anchors/$f" ] && cp "../shared/anchors/$f" .gpu/
done
du -sh .gpu
