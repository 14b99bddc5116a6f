#!/usr/bin/env bash
# Runs ON THE GPU MACHINE from the repo root, over binaries staged by scripts/gpu-stage.sh:
#   bash .gpu/gpu-run.sh PHASE...
# Phases: tests, quickstart, jit, cub, plain, plainquick, variants, ncu, scanncu, fig4, seglayouts, cubseg,
# torchseg, segmented, segsweep, segsweepv (validated), segsweeps (segsweep at 2^24–2^28),
# segwide, segvariants, segcarveout, segncu, segncusrc, tailsncu (heavy tails), portncu, portncusrc,
# plainportncu (Shuffle and the portable plain kernel under ncu),
# sanitize,
# sanitizequick (the segmented part), fig5, fig5quick, torch, anchor,
# interop, views (views at an odd offset), cluster (2+ GPUs, NCCL), argmax, segargmax, lse (log-sum-exp: exp per item),
# large (values of 128 to 2048 bytes), largencu (1 KiB values' kernels under ncu),
# axes (reductions along the axes of arrays), scan (scans: CUB DeviceScan and torch.cumsum in the same command), scanquick,
# portable (the portable mode, plain, segmented, along axes and scans, against the default and CUB's gpu_to_gpu
# determinism), portable-plain, portable-axes, portable-seg, portable-scan (its plain section and those along axes, segmented and of scans alone),
# fuzz, api (every public call as users call it), overhead (what each call's host work adds to it),
# ab (builds of bench: see the phase).
# cubseg, torchseg, segmented, segsweep and segwide read the layouts seglayouts writes (same run).
# Logs, CSV and SVG are written to a work folder and packed into $OUT/results.tgz (the device
# tool brings back at most 8 files); $OUT/summary.txt is also printed last. Read the summary from
# the files that come back rather than piping this script's output (through `tail`, a call cut by
# its limit returns nothing): it is copied after every phase and every test binary.
set -uo pipefail
DEST=${OUT:-/tmp/reduce-dest}
OUT=/tmp/reduce-work
rm -rf "$OUT"
mkdir -p "$OUT" "$DEST"
# A second run of this script in one device command keeps the first's results: they are
# unpacked into the work folder and packed again with this run's (the device tool empties $DEST
# before each command).
[ -f "$DEST/results.tgz" ] && tar -xzf "$DEST/results.tgz" -C "$OUT"
export REDUCE_REQUIRE_GPU=1 REDUCE_REQUIRE_NVRTC=1
# Not REDUCE_REQUIRE_EMULATOR: the emulated-kernel tests run here when a host C++ compiler with
# AddressSanitizer works, and say why they skip otherwise; CI (.ci/run) requires them.
# NVLink SHARP (multicast) off in everything that starts NCCL: it can take the shared host's
# GPUs out of service.
export NCCL_NVLS_ENABLE=0
export REDUCE_CUDA_CACHE_DIR=/tmp/reduce-cuda-cache
LAYOUTS=/tmp/reduce-layouts
SUMMARY="$OUT/summary.txt"
touch "$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }

date -u +"run %Y-%m-%dT%H:%M:%SZ" | tee -a "$SUMMARY"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee -a "$SUMMARY"

# The newer CCCL headers staged in .gpu/cccl.tgz (CUB's gpu_to_gpu determinism, its
# DeviceSegmentedScan): prints the nvcc flag that puts them first, nothing where none are staged
# or they do not extract. Extracted once per staged archive (a warm machine keeps /tmp; the
# marker holds the archive's checksum).
staged_cccl() {
  [ -f .gpu/cccl.tgz ] || return 0
  local sum
  sum=$(cksum < .gpu/cccl.tgz)
  [ "$(cat /tmp/cccl/.extracted 2>/dev/null)" = "$sum" ] || { rm -rf /tmp/cccl && mkdir -p /tmp/cccl \
    && tar xzf .gpu/cccl.tgz -C /tmp/cccl && echo "$sum" > /tmp/cccl/.extracted; } \
    || { echo "staged_cccl: .gpu/cccl.tgz did not extract" >&2; return 0; }
  echo "-I/tmp/cccl/include"
}

build_cub() {  # in the background while the GPU is busy with other phases
  if [ ! -x /tmp/cub_sweep ]; then
    nvcc -O3 -std=c++17 -arch=sm_90 .gpu/anchors/cub_sweep.cu -o /tmp/cub_sweep > "$OUT/nvcc.log" 2>&1
  fi
}

# Per-instruction counts and stall samples of `bench segncu`'s launches of one kernel:
# ncu_source KERNEL TAG SKIPS... (each skip: the launch's index among that kernel's) writes
# $OUT/TAG-sass-SKIP.csv.
ncu_source() {
  local kernel=$1 tag=$2
  shift 2
  for skip in "$@"; do
    REDUCE_CUDA_LINEINFO=1 ncu --clock-control none -k regex:"$kernel" --launch-skip "$skip" --launch-count 1 \
      --section SourceCounters -f -o "$OUT/$tag" .gpu/bin/bench segncu > "$OUT/$tag-$skip.log" 2>&1
    ncu -i "$OUT/$tag.ncu-rep" --page source --csv --print-source sass > "$OUT/$tag-sass-$skip.csv" 2>&1
    rm -f "$OUT/$tag.ncu-rep"
    note "$tag: launch $skip, $(wc -l < "$OUT/$tag-sass-$skip.csv") lines of per-instruction counts"
  done
}

# One staged test binary (compressed by gpu-stage.sh): its log in $OUT/test-NAME.log, its line
# (and its failures) in the summary, which comes back after every binary even if the call's
# limit cuts the phase (on an H100 the whole suite takes past 10 minutes one binary at a time).
run_test_binary() {
  local name=$1 z=".gpu/tests/$1.gz" t="/tmp/reduce-tests/$1" start rc result
  [ -f "$z" ] || { note "test $name: not staged"; return; }
  gunzip -c "$z" > "$t" && chmod +x "$t" || { note "test $name: does not decompress"; return; }
  start=$(date +%s)
  # --show-output: what passing tests print stays in the log (which case a test met)
  "$t" --show-output > "$OUT/test-$name.log" 2>&1
  rc=$?
  result=$(grep -E "^test result" "$OUT/test-$name.log" | tail -1)
  # one append per binary, so that binaries running at once do not interleave their lines
  { echo "test $name rc=$rc $(( $(date +%s) - start ))s ${result}"
    [ $rc -ne 0 ] && grep -E "panicked|FAILED|failed" "$OUT/test-$name.log" | head -20
  } > "$OUT/line-$name.txt"
  cat "$OUT/line-$name.txt"
  cat "$OUT/line-$name.txt" >> "$SUMMARY"
  rm -f "$OUT/line-$name.txt"
  cp "$SUMMARY" "$DEST/summary.txt"
}

for phase in "$@"; do
  phase_start=$(date +%s)
  case "$phase" in
    tests)
      build_cub & BUILD=$!
      mkdir -p /tmp/reduce-tests
      # REDUCE_TESTS="a b": only these test binaries, in this order (default: all, by name).
      # REDUCE_TEST_JOBS=N: N binaries at once (default 1; each already runs its tests on every
      # core, but most binaries spend their time in a few long tests or in NVRTC, so 2-3 at once
      # take the whole suite in well under half the time; they share the GPU's memory).
      for name in ${REDUCE_TESTS:-$(cd .gpu/tests && ls | sed 's/\.gz$//')}; do
        while [ "$(jobs -rp | grep -cvx "$BUILD")" -ge "${REDUCE_TEST_JOBS:-1}" ]; do wait -n; done
        run_test_binary "$name" &
      done
      while [ "$(jobs -rp | grep -cvx "$BUILD")" -gt 0 ]; do wait -n; done
      wait $BUILD
      ;;
    quickstart)
      rm -rf "$REDUCE_CUDA_CACHE_DIR"
      for run in first-process second-process; do
        note "quickstart ($run, disk cache $( [ -d "$REDUCE_CUDA_CACHE_DIR" ] && echo warm || echo empty )):"
        .gpu/bin/quickstart 2>&1 | tee "$OUT/quickstart-$run.log" | grep -E "backend|reduced|equal" | tee -a "$SUMMARY"
      done
      ;;
    jit)
      .gpu/bin/bench jit --out "$OUT" 2>&1 | tee -a "$SUMMARY"
      ;;
    cub)
      build_cub
      /tmp/cub_sweep ${CUB_MAX_LOG2:-30} > "$OUT/cub.txt" 2>&1 || note "cub_sweep failed: $(tail -3 "$OUT/cub.txt")"
      grep -E "n=(1048576|16777216|268435456) " "$OUT/cub.txt" | tee -a "$SUMMARY"
      ;;
    plain)
      .gpu/bin/bench plain --out "$OUT" --cub "$OUT/cub.txt" 2>"$OUT/bench-plain.err" | tee "$OUT/bench-plain.txt" | tail -n 70 >> "$SUMMARY"
      ;;
    plainquick)
      .gpu/bin/bench plain --quick --out "$OUT" --cub "$OUT/cub.txt" 2>"$OUT/bench-plain.err" | tee "$OUT/bench-plain.txt" | tail -n 70 >> "$SUMMARY"
      ;;
    variants)
      .gpu/bin/bench variants --out "$OUT" 2>"$OUT/bench-variants.err" | tee -a "$SUMMARY"
      ;;
    ncu)
      ncu --clock-control none -k regex:reduce_shuffle -c 2 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
        .gpu/bin/bench ncu > "$OUT/ncu.txt" 2>&1
      grep -E "Throughput|Duration|Achieved Occupancy|Stall|DRAM|Memory \[%\]" "$OUT/ncu.txt" | head -40 | tee -a "$SUMMARY"
      ncu --clock-control none -k regex:read_roof -c 1 --section SpeedOfLight .gpu/bin/bench ncu > "$OUT/ncu-roof.txt" 2>&1
      grep -E "Throughput|Duration" "$OUT/ncu-roof.txt" | head -10 | tee -a "$SUMMARY"
      ;;
    scanncu)
      # scans of `bench ncu`: throughput, occupancy, stalls and per-instruction stall samples of
      # one launch each (SCANNCU_KERNEL: the kernel, default scan_ahead; SCANNCU_SKIPS: the
      # launches among that kernel's, default 1, the second inclusive scan of 2^28 f32; "3 5 7":
      # 2^26 f32 plain, by CSR offsets and by keys of segments of 3 items; SCANNCU_BENCH: the
      # bench binary, default .gpu/bin/bench)
      k=${SCANNCU_KERNEL:-scan_ahead} b=${SCANNCU_BENCH:-.gpu/bin/bench}
      for skip in ${SCANNCU_SKIPS:-1}; do
        ncu --clock-control none -k regex:"$k" -s "$skip" -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
          --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats --section InstructionStats \
          "$b" ncu > "$OUT/ncu-scan-$skip.txt" 2>&1
        note "scanncu launch $skip:"
        grep -E "Throughput|Duration|Occupancy|Stall|Registers|Block Limit|Shared Memory|Eligible|Issued|Executed Instructions  " "$OUT/ncu-scan-$skip.txt" | head -60 | tee -a "$SUMMARY"
        REDUCE_CUDA_LINEINFO=1 ncu --clock-control none -k regex:"$k" -s "$skip" -c 1 --section SourceCounters -f -o "$OUT/scansrc" \
          "$b" ncu > "$OUT/scansrc-$skip.log" 2>&1
        ncu -i "$OUT/scansrc.ncu-rep" --page source --csv --print-source sass > "$OUT/scansrc-sass-$skip.csv" 2>&1
        rm -f "$OUT/scansrc.ncu-rep"
      done
      ;;
    seglayouts)
      .gpu/bin/bench seglayouts --layouts "$LAYOUTS" 2>&1 | tee -a "$SUMMARY"
      ;;
    cubseg)
      build_cub
      /tmp/cub_sweep 0 segmented "$LAYOUTS" > "$OUT/cubseg.txt" 2>&1 || note "cub segmented failed: $(tail -3 "$OUT/cubseg.txt")"
      note "cubseg: $(grep -c cubseg "$OUT/cubseg.txt") timings"
      ;;
    torchseg)
      PYTHONUNBUFFERED=1 python3 .gpu/anchors/torch_seg.py "$LAYOUTS" > "$OUT/torchseg.txt" 2>&1 || note "torch segmented failed: $(tail -3 "$OUT/torchseg.txt")"
      note "torchseg: $(grep -c torch_ "$OUT/torchseg.txt") timings"
      ;;
    torch)
      PYTHONUNBUFFERED=1 python3 .gpu/anchors/torch_anchor.py > "$OUT/torch.txt" 2>&1 || note "torch anchor failed"
      grep -E "segment_reduce|index_add" "$OUT/torch.txt" | tee -a "$SUMMARY"
      ;;
    segmented)
      .gpu/bin/bench segmented --out "$OUT" --cub "$OUT/cubseg.txt" --torch "$OUT/torchseg.txt" 2>"$OUT/bench-segmented.err" | tee "$OUT/bench-segmented.txt" | grep -E "^n = |worst|min xplain" >> "$SUMMARY"
      tail -3 "$OUT/bench-segmented.err" >> "$SUMMARY"
      ;;
    segsweep)
      .gpu/bin/bench segsweep --out "$OUT" --cub "$OUT/cubseg.txt" --torch "$OUT/torchseg.txt" 2>"$OUT/bench-segsweep.err" | tee -a "$SUMMARY"
      ;;
    segsweepv)
      # bench segsweep with our rows validated (labels `... validated`; no anchors):
      # $OUT/segsweep-validated.csv
      mkdir -p "$OUT/sweep-v"
      .gpu/bin/bench segsweep --out "$OUT/sweep-v" --validated 2>"$OUT/bench-segsweep-v.err" | tee -a "$SUMMARY"
      mv "$OUT/sweep-v/segsweep.csv" "$OUT/segsweep-validated.csv" 2>/dev/null
      rm -rf "$OUT/sweep-v"
      ;;
    segsweeps)
      # bench segsweep at other sizes (SWEEP_LOG2S, default "24 25 26 28"; no anchors, which hold
      # 2^26 only): $OUT/segsweep-2pK.csv each, the printed tables in the summary
      for k in ${SWEEP_LOG2S:-24 25 26 28}; do
        mkdir -p "$OUT/sweep-2p$k"
        note "segsweep --log2 $k:"
        .gpu/bin/bench segsweep --out "$OUT/sweep-2p$k" --log2 "$k" 2>"$OUT/bench-segsweep-2p$k.err" | tee -a "$SUMMARY"
        mv "$OUT/sweep-2p$k/segsweep.csv" "$OUT/segsweep-2p$k.csv" 2>/dev/null
        rm -rf "$OUT/sweep-2p$k"
      done
      ;;
    segwide)
      # u64 layouts: SegShuffle (Auto), SegMerge and u32 alongside; torch from torchseg (same run)
      .gpu/bin/bench segwide --out "$OUT" --torch "$OUT/torchseg.txt" 2>"$OUT/bench-segwide.err" | tee -a "$SUMMARY"
      tail -3 "$OUT/bench-segwide.err" >> "$SUMMARY"
      ;;
    segvariants)
      .gpu/bin/bench segvariants --out "$OUT" 2>"$OUT/bench-segvariants.err" | tee -a "$SUMMARY"
      ;;
    segcarveout)
      # the same variants with the unified L1/shared memory carved out for shared memory
      mkdir -p "$OUT/carveout100"
      echo "REDUCE_SMEM_CARVEOUT=100:" | tee -a "$SUMMARY"
      REDUCE_SMEM_CARVEOUT=100 .gpu/bin/bench segvariants --out "$OUT/carveout100" 2>"$OUT/bench-segcarveout.err" | tee -a "$SUMMARY"
      ;;
    segncu)
      # SegShuffle, SegMerge, then SegPipeline (see `bench segncu`); SEGNCU_ENV (e.g. REDUCE_SMEM_CARVEOUT=100)
      # is passed to the bench, SEGNCU_TAG names the output
      tag=${SEGNCU_TAG:-segncu}
      env ${SEGNCU_ENV:-} REDUCE_CUDA_LINEINFO=1 ncu --clock-control none -k regex:'reduce_seg_(merge|shuffle)' --section SpeedOfLight --section Occupancy \
        --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats --section ComputeWorkloadAnalysis \
        --section InstructionStats --section SourceCounters --print-details all .gpu/bin/bench segncu > "$OUT/$tag.txt" 2>&1
      echo "$tag ${SEGNCU_ENV:-}" | tee -a "$SUMMARY"
      grep -E "  reduce_seg_|Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Block Limit|Shared Memory Configuration Size|Dynamic Shared|Static Shared|Issue Slots Busy|Executed Instructions  " "$OUT/$tag.txt" | head -200 | tee -a "$SUMMARY"
      ;;
    tailsncu)
      # SegBlocks (its block, 32 and 256 threads), SegShuffle and SegHeads on two heavy tails
      # (bench segncu, SEGNCU_TAILS=1): throughput, occupancy, stalls, and how evenly the SMs were busy (a tail of long units
      # shows as sm__cycles_active.avg well below .max)
      SEGNCU_TAILS=1 ncu --clock-control none -k regex:'reduce_seg_' --section SpeedOfLight --section Occupancy \
        --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis \
        --metrics sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,sm__cycles_elapsed.max \
        --print-details all .gpu/bin/bench segncu > "$OUT/tailsncu.txt" 2>&1
      grep -E "  reduce_seg_|Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Grid Size|Block Size|Issue Slots Busy|sm__cycles|^    Stall " \
        "$OUT/tailsncu.txt" | head -200 | tee -a "$SUMMARY"
      ;;
    plainportncu)
      # Shuffle (ordered) and the portable reduction on 2^26 f32 and 2^26 f64, two launches each,
      # after `bench ncu`'s two 2^28 Shuffle launches: throughput, instructions, stalls, and the
      # per-instruction counts of each kernel's second f32 launch (issue 15: where the portable
      # grouping's 4-8% goes)
      ncu --clock-control none -k regex:"reduce_(shuffle|portable)" --launch-skip 2 --section SpeedOfLight \
        --section Occupancy --section WarpStateStats --section LaunchStats --section InstructionStats \
        --section MemoryWorkloadAnalysis .gpu/bin/bench ncu > "$OUT/plainportncu.txt" 2>&1
      grep -E "  reduce_(shuffle|portable)|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Instructions  |^    Stall " \
        "$OUT/plainportncu.txt" | head -120 | tee -a "$SUMMARY"
      for k in shuffle portable; do
        REDUCE_CUDA_LINEINFO=1 ncu --clock-control none -k regex:"reduce_$k" --launch-skip $([ $k = shuffle ] && echo 3 || echo 1) \
          --launch-count 1 --section SourceCounters -f -o "$OUT/plainport-$k" .gpu/bin/bench ncu > "$OUT/plainport-$k.log" 2>&1
        ncu -i "$OUT/plainport-$k.ncu-rep" --page source --csv --print-source sass > "$OUT/plainport-$k-sass.csv" 2>&1
        rm -f "$OUT/plainport-$k.ncu-rep"
      done
      ;;
    portncu)
      # the portable segmented kernel's launches of `bench segncu` (one segment and size 3 CSR, size 3
      # and 90% empty owner form, trusted)
      REDUCE_CUDA_LINEINFO=1 ncu --clock-control none -k regex:reduce_seg_portable --section SpeedOfLight --section Occupancy \
        --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats --section InstructionStats \
        --section SourceCounters --print-details all .gpu/bin/bench segncu > "$OUT/portncu.txt" 2>&1
      grep -E "  reduce_seg_|Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Block Limit|Dynamic Shared|Issue Slots Busy|Executed Instructions  |^    Stall " "$OUT/portncu.txt" | head -200 | tee -a "$SUMMARY"
      ;;
    portncusrc)
      # per-instruction counts and stall samples of one portable segmented launch of `bench segncu`
      # (PORTSRC_SKIPS: which ones; default 1, size 3 CSR; 0 one segment CSR, 2 size 3 and 3 90%
      # empty owner form). The kernel's text is not on this machine: to name the source lines,
      # compile the same kernel here with REDUCE_CUDA_LINEINFO=1 and `nvdisasm -g` (NVRTC 13.0 on
      # both: the instructions are the same, one for one)
      # shellcheck disable=SC2086
      ncu_source reduce_seg_portable portsrc ${PORTSRC_SKIPS:-1}
      ;;
    overhead)
      # each call alone, queued back to back and by the host clock around its launches
      .gpu/bin/bench overhead --out "$OUT" 2>"$OUT/bench-overhead.err" | tee -a "$SUMMARY"
      ;;
    api)
      # every public call as users call it, with the kernels' time beside it; CUB's best case
      # (DeviceReduce + a copy into pinned memory + a synchronise) and PyTorch by the same clock
      # (API_QUICK=1: bench api --quick, no 2^28 and 2^24 segmented items)
      nvcc -O3 -std=c++17 -arch=sm_90 .gpu/anchors/cub_latency.cu -o /tmp/cub_latency > "$OUT/nvcc-latency.log" 2>&1 \
        && /tmp/cub_latency > "$OUT/cub-api.txt" 2>&1 || note "cub latency anchor failed: $(tail -3 "$OUT/cub-api.txt" "$OUT/nvcc-latency.log")"
      [ -d "$LAYOUTS" ] || .gpu/bin/bench seglayouts --layouts "$LAYOUTS" > /dev/null
      PYTHONUNBUFFERED=1 python3 .gpu/anchors/torch_api.py "$LAYOUTS" > "$OUT/torch-api.txt" 2>&1 || note "torch api anchor failed: $(tail -3 "$OUT/torch-api.txt")"
      quick=""; [ "${API_QUICK:-0}" = 1 ] && quick="--quick"
      .gpu/bin/bench api $quick --out "$OUT" --cub "$OUT/cub-api.txt" --torch "$OUT/torch-api.txt" 2>"$OUT/bench-api.err" | tee "$OUT/bench-api.txt" | tail -n 90 >> "$SUMMARY"
      tail -3 "$OUT/bench-api.err" >> "$SUMMARY"
      ;;
    ab)
      # A/B of two or more builds of `bench` in one command: each .gpu/ab/bench_NAME (built by
      # scripts/ab-stage.sh after staging) runs each of AB_MODES (default "segmented"; e.g. "plain
      # segmented") with --quick in turn, interleaved (A B A B ...), AB_REPEAT rounds (default
      # 2). Each measures plain Shuffle itself; scripts/ab-compare.py sets the builds' difference
      # against the rounds' own spread. A bench_NAME may be a sh script that runs one binary
      # with an environment variable set (variants of one build).
      for r in $(seq "${AB_REPEAT:-2}"); do
        for b in .gpu/ab/bench_*; do
          [ -x "$b" ] || { note "ab: no .gpu/ab/bench_* binaries"; break 2; }
          name=${b##*/bench_}
          for mode in ${AB_MODES:-segmented}; do
            "$b" "$mode" --quick --out "$OUT/ab/$name-$r" > "$OUT/ab-$name-$mode-$r.log" 2>&1
            note "ab $name $mode $r rc=$? $(grep -m1 'plain Shuffle' "$OUT/ab-$name-$mode-$r.log")"
            # each run comes back even if a later one runs past the call's limit
            tar -czf "$DEST/results.tgz" -C "$OUT" . && cp "$SUMMARY" "$DEST/summary.txt"
          done
        done
      done
      ;;
    segncusrc)
      # per-instruction counts and stall samples of SegShuffle launches of `bench segncu`
      # (SEGSRC_SKIPS: which ones; default 2, size-3 offsets form; 0 is one segment; 4-6 one segment
      # validated, 1000 equal trusted and validated, all offsets form; 7 random 10..50 and 8 two-level,
      # offsets form; 9-11 SegPipeline size 3, random 10..50 and one segment, offsets form)
      # shellcheck disable=SC2086
      ncu_source reduce_seg_shuffle segsrc ${SEGSRC_SKIPS:-2}
      ;;
    sanitize)
      for tool in memcheck racecheck synccheck initcheck; do
        compute-sanitizer --tool "$tool" --error-exitcode 3 .gpu/bin/bench sanitize > "$OUT/sanitize-$tool.txt" 2>&1
        note "compute-sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-$tool.txt" | tail -1) $(grep -E 'mismatches' "$OUT/sanitize-$tool.txt")"
      done
      ;;
    sanitizequick)
      # the segmented part of the workload only (after a change to a segmented kernel)
      for tool in memcheck racecheck synccheck initcheck; do
        compute-sanitizer --tool "$tool" --error-exitcode 3 .gpu/bin/bench sanitize --quick > "$OUT/sanitize-$tool.txt" 2>&1
        note "compute-sanitizer $tool (segmented part) rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-$tool.txt" | tail -1) $(grep -E 'mismatches' "$OUT/sanitize-$tool.txt")"
      done
      ;;
    fig5)
      .gpu/bin/bench fig5 --out "$OUT" 2>"$OUT/bench-fig5.err" | tee -a "$SUMMARY"
      ;;
    fig5quick)
      .gpu/bin/bench fig5 --quick --out "$OUT" 2>"$OUT/bench-fig5.err" | tee -a "$SUMMARY"
      ;;
    fig4)
      .gpu/bin/bench fig4 --out "$OUT" 2>"$OUT/bench-fig4.err" | tee -a "$SUMMARY"
      ;;
    anchor)
      nvcc -O3 -std=c++17 -arch=sm_90 .gpu/anchors/cub_anchor.cu -o /tmp/cub_anchor > "$OUT/nvcc-anchor.log" 2>&1 && /tmp/cub_anchor > "$OUT/anchor.txt" 2>&1
      tee -a "$SUMMARY" < "$OUT/anchor.txt"
      ;;
    interop)
      .gpu/bin/interop > "$OUT/interop-example.log" 2>&1
      note "interop example rc=$?"
      tail -n 5 "$OUT/interop-example.log" | tee -a "$SUMMARY"
      .gpu/bin/bench interop --out "$OUT" 2>"$OUT/bench-interop.err" | tee -a "$SUMMARY"
      tail -3 "$OUT/bench-interop.err" >> "$SUMMARY"
      ;;
    views)
      .gpu/bin/bench views --out "$OUT" 2>"$OUT/bench-views.err" | tee -a "$SUMMARY"
      tail -3 "$OUT/bench-views.err" >> "$SUMMARY"
      ;;
    cluster)
      # More than one GPU: the cluster tests (one process on 1-4 GPUs, one process per GPU,
      # missing and leaving peers), torch.sum + all_reduce over NCCL, then bench_cluster (weak
      # scaling, combine latency; both exchanges) with torch side by side, the same with one
      # process per GPU, then the multi_gpu example both ways.
      nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
      grep -E "^GPU[0-9]" "$OUT/topo.txt" | tee -a "$SUMMARY"
      # Every step is bounded, so that the phase stays under the device tool's 10 minutes and
      # the logs come back even if a step hangs.
      for t in cluster:180 reduce_cuda:60; do
        limit=${t#*:}
        t=${t%:*}
        start=$(date +%s)
        timeout "$limit" ".gpu/cluster/$t" > "$OUT/cluster-test-$t.log" 2>&1
        rc=$?
        note "cluster test $t rc=$rc $(( $(date +%s) - start ))s $(grep -E '^test result' "$OUT/cluster-test-$t.log" | tail -1)"
        grep -E "ran with worlds|processes, rank|a missing rank, rank|a wrong world size, rank|a peer that leaves, rank|panicked|FAILED" "$OUT/cluster-test-$t.log" | head -30 | tee -a "$SUMMARY"
      done
      start=$(date +%s)
      PYTHONUNBUFFERED=1 timeout 90 python3 .gpu/anchors/torch_allreduce.py > "$OUT/torch-allreduce.txt" 2>&1 || note "torch all_reduce anchor failed: $(tail -3 "$OUT/torch-allreduce.txt")"
      note "torch all_reduce anchor $(( $(date +%s) - start ))s"
      grep -E "^(device|torch_allreduce) " "$OUT/torch-allreduce.txt" | tee -a "$SUMMARY"
      start=$(date +%s)
      timeout 150 .gpu/cluster/bench_cluster --out "$OUT" --torch "$OUT/torch-allreduce.txt" 2>"$OUT/bench-cluster.err" | tee "$OUT/bench-cluster.txt" >> "$SUMMARY"
      rc=${PIPESTATUS[0]}
      note "bench_cluster rc=$rc $(( $(date +%s) - start ))s"
      tail -3 "$OUT/bench-cluster.err" >> "$SUMMARY"
      # One process per GPU (the NCCL exchange): 2 processes, then every GPU.
      gpus=$(nvidia-smi -L | wc -l)
      for w in $(printf '%s\n' 2 "$gpus" | sort -nu); do
        [ "$w" -ge 2 ] && [ "$w" -le "$gpus" ] || continue
        rm -f /tmp/reduce-bench-cluster.id
        for r in $(seq 0 $((w - 1))); do
          timeout 120 .gpu/cluster/bench_cluster --rank "$r" --world "$w" --id-file /tmp/reduce-bench-cluster.id --out "$OUT/processes-$w" > "$OUT/bench-cluster-p$w-r$r.txt" 2>&1 &
        done
        wait
        cat "$OUT/bench-cluster-p$w-r0.txt" >> "$SUMMARY"
        cp "$OUT/processes-$w/cluster-processes.csv" "$OUT/cluster-processes-$w.csv" 2>/dev/null
      done
      timeout 45 .gpu/cluster/multi_gpu > "$OUT/multi-gpu.txt" 2>&1
      note "multi_gpu (one process) rc=$?"
      tail -3 "$OUT/multi-gpu.txt" | tee -a "$SUMMARY"
      # The README's recipe: one process per GPU, rank 0 publishes the id in a file.
      gpus=$(nvidia-smi -L | wc -l)
      rm -f /tmp/reduce-cluster.id
      for r in $(seq 0 $((gpus - 1))); do
        timeout 45 .gpu/cluster/multi_gpu --rank "$r" --world "$gpus" --id-file /tmp/reduce-cluster.id > "$OUT/multi-gpu-rank$r.txt" 2>&1 &
      done
      wait
      for r in $(seq 0 $((gpus - 1))); do
        note "multi_gpu rank $r of $gpus: $(grep -cE 'equal to the sequential fold: true' "$OUT/multi-gpu-rank$r.txt") of 2 results equal to the fold"
      done
      ;;
    argmax)
      # lifted f32 -> (max, first index) against CUB's DeviceReduce::ArgMax and torch.argmax
      { nvcc -O3 -std=c++17 -arch=sm_90 .gpu/anchors/argmax_anchor.cu -o /tmp/argmax_anchor > "$OUT/nvcc-argmax.log" 2>&1 \
          && /tmp/argmax_anchor > "$OUT/cub-argmax.txt" 2>&1; } || note "CUB argmax anchor failed: $(tail -3 "$OUT/nvcc-argmax.log" "$OUT/cub-argmax.txt" 2>/dev/null)"
      PYTHONUNBUFFERED=1 python3 .gpu/anchors/argmax_torch.py > "$OUT/torch-argmax.txt" 2>&1 || note "torch argmax failed: $(tail -2 "$OUT/torch-argmax.txt")"
      grep -hE "argmax" "$OUT/cub-argmax.txt" "$OUT/torch-argmax.txt" | tee -a "$SUMMARY"
      .gpu/bin/bench argmax --out "$OUT" --cub "$OUT/cub-argmax.txt" --torch "$OUT/torch-argmax.txt" 2>"$OUT/bench-argmax.err" | tee -a "$SUMMARY"
      ;;
    lse)
      # log-sum-exp of f32 logits (reduce_core::math's exp per item), all items and per row, against the read roof
      .gpu/bin/bench lse --out "$OUT" 2>"$OUT/bench-lse.err" | tee -a "$SUMMARY"
      ;;
    large)
      # values of 128 to 2048 bytes: plain, segmented by offsets and scans against the roofs, beside
      # the defaults large values had before and the candidates for them (the shared-memory trees,
      # Shuffle with more items a lane); LARGE_QUICK=1: 256 MiB of items instead of 1 GiB
      .gpu/bin/bench large ${LARGE_QUICK:+--quick} --out "$OUT" 2>"$OUT/bench-large.err" | tee -a "$SUMMARY"
      tail -2 "$OUT/bench-large.err" >> "$SUMMARY"
      ;;
    largencu)
      # 1 KiB values of `bench large` (LARGE_ONLY, default 1024) under ncu: one launch each of plain
      # Auto (Shuffle), Tb2 and Tb2Seg, with their shared-memory bank conflicts and local-memory
      # traffic (decisions 0092, 0093); without the metrics where this ncu lacks one of them
      mkdir -p "$OUT/largencu"
      metrics=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
      metrics=$metrics,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum
      for k in "reduce_shuffle" "reduce_tb2\$" "reduce_tb2_seg"; do
        log="$OUT/largencu-${k//[^a-z0-9_]/}.txt"
        for with in "--metrics $metrics" ""; do
          # shellcheck disable=SC2086
          LARGE_ONLY=${LARGE_ONLY:-1024} ncu --clock-control none -k regex:"$k" -c 1 --section SpeedOfLight \
            --section Occupancy --section LaunchStats --section WarpStateStats $with \
            .gpu/bin/bench large --quick --out "$OUT/largencu" > "$log" 2>&1
          grep -q "Duration" "$log" && break
        done
        note "largencu $k:"
        grep -iE "Duration|DRAM Throughput|bank_conflicts|local_op|Achieved Occupancy|Registers Per|Dynamic Shared|Stall" \
          "$log" | head -30 | tee -a "$SUMMARY"
      done
      ;;
    portable)
      # f32, f64 sums and log-sum-exp at 2^20..2^30: Config::portable against the default, the ordered
      # Shuffle and CUB DeviceReduce::Sum (run_to_run, and gpu_to_gpu where the toolkit's CCCL has it);
      # then SegConfig::portable against the default on every segmented distribution, f32, f64 and
      # lifted log-sum-exp (portable-seg.csv), then AxisConfig::portable against the default on bench
      # axes' shapes (portable-axes.csv), then ScanConfig::portable (portable-scan.csv)
      # with the newer CCCL headers staged in .gpu/cccl.tgz (gpu_to_gpu), else the toolkit's
      cccl=$(staged_cccl)
      { nvcc -O3 -std=c++17 -arch=sm_90 $cccl .gpu/anchors/cub_portable.cu -o /tmp/cub_portable > "$OUT/nvcc-portable.log" 2>&1 \
          && /tmp/cub_portable > "$OUT/cub-portable.txt" 2>&1; } || note "CUB portable anchor failed: $(tail -3 "$OUT/nvcc-portable.log" "$OUT/cub-portable.txt" 2>/dev/null)"
      head -2 "$OUT/cub-portable.txt" | tee -a "$SUMMARY"
      .gpu/bin/bench portable --out "$OUT" --cub "$OUT/cub-portable.txt" 2>"$OUT/bench-portable.err" | tee -a "$SUMMARY"
      tail -2 "$OUT/bench-portable.err" >> "$SUMMARY"
      ;;
    portable-plain)
      # Config::portable against the default and Shuffle, plain sums and log-sum-exp alone (portable-plain.csv)
      .gpu/bin/bench portable-plain --out "$OUT" 2>"$OUT/bench-portable-plain.err" | tee -a "$SUMMARY"
      tail -2 "$OUT/bench-portable-plain.err" >> "$SUMMARY"
      ;;
    portable-seg)
      # SegConfig::portable against the default on every segmented distribution alone (portable-seg.csv)
      .gpu/bin/bench portable-seg --out "$OUT" 2>"$OUT/bench-portable-seg.err" | tee -a "$SUMMARY"
      tail -2 "$OUT/bench-portable-seg.err" >> "$SUMMARY"
      ;;
    portable-axes)
      # AxisConfig::portable against the default on bench axes' shapes alone (portable-axes.csv)
      .gpu/bin/bench portable-axes --out "$OUT" 2>"$OUT/bench-portable-axes.err" | tee -a "$SUMMARY"
      tail -2 "$OUT/bench-portable-axes.err" >> "$SUMMARY"
      ;;
    portable-scan)
      # ScanConfig::portable against the default: f32, f64 and lifted log-sum-exp scans, plain,
      # by key and by offsets, at 2^24 and 2^28 (PORTABLE_SCAN_QUICK=1: 2^24) (portable-scan.csv)
      .gpu/bin/bench portable-scan ${PORTABLE_SCAN_QUICK:+--quick} --out "$OUT" 2>"$OUT/bench-portable-scan.err" | tee -a "$SUMMARY"
      tail -2 "$OUT/bench-portable-scan.err" >> "$SUMMARY"
      ;;
    axes)
      # rows, columns and middle axes of 2^26 f32 (AXES_LOG2=28: 2^28), logits per row (ArgMax, log-sum-exp), against the read roof,
      # torch.sum/argmax/logsumexp and CUB's DeviceSegmentedReduce (rows) in this command
      { { nvcc -O3 -std=c++17 -arch=sm_90 .gpu/anchors/cub_axes.cu -o /tmp/cub_axes > "$OUT/nvcc-axes.log" 2>&1 \
            || nvcc -O3 -std=c++17 -arch=sm_90 -DCUB_AXES_OFFSETS .gpu/anchors/cub_axes.cu -o /tmp/cub_axes >> "$OUT/nvcc-axes.log" 2>&1; } \
          && /tmp/cub_axes "${AXES_LOG2:-26}" > "$OUT/cub-axes.txt" 2>&1; } || note "CUB axes anchor failed: $(tail -3 "$OUT/nvcc-axes.log" "$OUT/cub-axes.txt" 2>/dev/null)"
      PYTHONUNBUFFERED=1 python3 .gpu/anchors/torch_axes.py "${AXES_LOG2:-26}" > "$OUT/torch-axes.txt" 2>&1 || note "torch axes failed: $(tail -2 "$OUT/torch-axes.txt")"
      .gpu/bin/bench axes --log2 "${AXES_LOG2:-26}" --out "$OUT" --cub "$OUT/cub-axes.txt" --torch "$OUT/torch-axes.txt" 2>"$OUT/bench-axes.err" | tee -a "$SUMMARY"
      ;;
    scan)
      # plain scans of four monoids at 2^20..2^28 and segmented scans of every distribution at
      # 2^26, against the copy roof, CUB's DeviceScan and InclusiveScanByKey (checked against
      # the sequential scan) and torch.cumsum, all in this command
      # (CUB's InclusiveScanByKey over the layouts of 2^26 items that seglayouts writes; then,
      # built with the staged CCCL headers, the newer CUB's plain scans and its
      # DeviceSegmentedScan by the same CSR offsets, which CCCL has only from 3.3: the toolkit's is 3.0).
      # SCAN_QUICK=1: bench scan --quick beside the anchors.
      [ -f "$LAYOUTS/size_1@67108864.u32" ] || .gpu/bin/bench seglayouts --layouts "$LAYOUTS" > /dev/null
      cccl=$(staged_cccl)
      NEWER_BUILD=""
      [ -n "$cccl" ] && { nvcc -O3 -std=c++17 -arch=sm_90 $cccl .gpu/anchors/cub_scan.cu -o /tmp/cub_scan_newer > "$OUT/nvcc-scan-newer.log" 2>&1 & NEWER_BUILD=$!; }
      { nvcc -O3 -std=c++17 -arch=sm_90 .gpu/anchors/cub_scan.cu -o /tmp/cub_scan > "$OUT/nvcc-scan.log" 2>&1 \
          && /tmp/cub_scan > "$OUT/cub-scan.txt" 2>&1 \
          && /tmp/cub_scan segmented "$LAYOUTS" >> "$OUT/cub-scan.txt" 2>&1; } || note "CUB scan anchor failed: $(tail -3 "$OUT/nvcc-scan.log" "$OUT/cub-scan.txt" 2>/dev/null)"
      if [ -z "$NEWER_BUILD" ]; then
        note "no CCCL headers staged or extracted (.gpu/cccl.tgz): no newer CUB in this command"
      else
        { wait $NEWER_BUILD && /tmp/cub_scan_newer newer "$LAYOUTS" | grep -v '^device' >> "$OUT/cub-scan.txt"; } \
          || note "the newer CUB's scans failed: $(tail -3 "$OUT/nvcc-scan-newer.log" "$OUT/cub-scan.txt" 2>/dev/null)"
      fi
      PYTHONUNBUFFERED=1 python3 .gpu/anchors/torch_scan.py > "$OUT/torch-scan.txt" 2>&1 || note "torch scan failed: $(tail -2 "$OUT/torch-scan.txt")"
      .gpu/bin/bench scan ${SCAN_QUICK:+--quick} --out "$OUT" --cub "$OUT/cub-scan.txt" --torch "$OUT/torch-scan.txt" 2>"$OUT/bench-scan.err" | tee -a "$SUMMARY"
      tail -2 "$OUT/bench-scan.err" >> "$SUMMARY"
      ;;
    scanquick)
      # bench scan --quick: plain scans at 2^24, the tile shapes and the other algorithms at 2^28,
      # the segmented scans; no anchors
      .gpu/bin/bench scan --quick --out "$OUT" 2>"$OUT/bench-scan.err" | tee -a "$SUMMARY"
      tail -2 "$OUT/bench-scan.err" >> "$SUMMARY"
      ;;
    segargmax)
      # ArgMax per segment lifted from f32, every distribution at 2^26, against CUB's
      # DeviceSegmentedReduce::ArgMax on the same layout files (written here if seglayouts did not run)
      [ -d "$LAYOUTS" ] || .gpu/bin/bench seglayouts --layouts "$LAYOUTS" >> "$SUMMARY" 2>&1
      { nvcc -O3 -std=c++17 -arch=sm_90 .gpu/anchors/segargmax_anchor.cu -o /tmp/segargmax_anchor > "$OUT/nvcc-segargmax.log" 2>&1 \
          && /tmp/segargmax_anchor "$LAYOUTS" 67108864 > "$OUT/cub-segargmax.txt" 2>&1; } || note "CUB segmented argmax anchor failed: $(tail -3 "$OUT/nvcc-segargmax.log" "$OUT/cub-segargmax.txt" 2>/dev/null)"
      .gpu/bin/bench segargmax --out "$OUT" --cub "$OUT/cub-segargmax.txt" 2>"$OUT/bench-segargmax.err" | tee -a "$SUMMARY"
      tail -2 "$OUT/bench-segargmax.err" >> "$SUMMARY"
      ;;
    fuzz)
      # the derive's differential fuzzer: 10 shards x 10^3 programs x 10^3 inputs, Rust vs GPU
      : > "$OUT/fuzz-shards.txt"
      compgen -G ".gpu/fuzz/fuzz-*.gz" > /dev/null || { note "fuzz: no shards staged (REDUCE_STAGE_FUZZ=0)"; continue; }
      for z in .gpu/fuzz/fuzz-*.gz; do
        shard=$(basename "$z" .gz)
        gunzip -c "$z" > "/tmp/$shard" && chmod +x "/tmp/$shard"
        "/tmp/$shard" --backend gpu --inputs 1000 --out "$OUT/$shard.txt" > "$OUT/$shard.log" 2>>"$OUT/fuzz.err"
        rc=$?
        head -1 "$OUT/$shard.log" | tee -a "$OUT/fuzz-shards.txt"
        [ $rc -ne 0 ] && note "fuzz $shard rc=$rc (1: mismatches, 2: the backend failed: $(tail -2 "$OUT/fuzz.err"))"
      done
      awk '{for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] ~ /^(programs|compared|faults_matched|skipped_panics|mismatches)$/) s[kv[1]] += kv[2] }}
           END {printf "fuzz total: programs=%d inputs/program=1000 compared=%d faults_matched=%d skipped_panics=%d mismatches=%d\n", s["programs"], s["compared"], s["faults_matched"], s["skipped_panics"], s["mismatches"]}' \
        "$OUT/fuzz-shards.txt" | tee -a "$SUMMARY"
      grep -h -A4 "^p[0-9]" "$OUT"/fuzz-[0-9]*.txt 2>/dev/null | head -60 | tee -a "$SUMMARY"
      ;;
    *) note "unknown phase $phase" ;;
  esac
  note "phase $phase: $(( $(date +%s) - phase_start )) s"
  # what is done so far comes back even if a later phase runs past the call's limit
  tar -czf "$DEST/results.tgz" -C "$OUT" . && cp "$SUMMARY" "$DEST/summary.txt"
done
tar -czf "$DEST/results.tgz" -C "$OUT" .
cp "$SUMMARY" "$DEST/summary.txt"
echo "======== summary"
cat "$SUMMARY"
