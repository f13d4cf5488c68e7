#!/usr/bin/env bash
# On a GPU machine, from the project root: everything a short GPU session checks, in one call
# that ends within BUDGET seconds (default 540; the device tool allows 600 a call). Logs and
# results go to $OUT (default /tmp/out), a line per step to $OUT/summary.txt.
#   bash tools/gpu_session.sh
# Before it, on the build machine: bash ../shared/gpu/prepare.sh && bash tools/gpu_wheels.sh,
# then carry .gpu/. Without .gpu/nd/ wheels it builds the plugins there (minutes of GPU time).
# Steps: setup (carried wheels, the Vulkan loader, the project editable); then at once, on the
# 16 cores, the conformance suite on cuda and on webgpu with NDPLANE_FALLBACK=error and the cuda
# plugin's GPU tests; then one at a time on a quiet machine bench_cuda.py, take_variants.cu,
# bench_webgpu.py, bench_webgpu_matmul.py, a compute-sanitizer memcheck of the cuda elementwise,
# transpose, scan, argmax, take and fused-row tests, and bench_scaling.py --quick at 16, 1, 4 and
# 8 threads (or SCALING_THREADS) while time is left. Every step runs under `timeout -k`, so a hung one costs
# its cap, not the session (BENCH_CAP seconds for benchmarks). At the end every log and JSON goes
# into $OUT/gpu-session.tgz beside summary.txt (the device tool brings back at most 8 files).
set -uo pipefail
cd "$(dirname "$0")/.."
T0=$(date +%s)
BUDGET=${BUDGET:-540}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
left() { echo $((BUDGET - ($(date +%s) - T0))); }
cap() { local l; l=$(left); ((l < $1)) && echo "$((l > 1 ? l : 1))" || echo "$1"; }
log() { echo "[$(($(date +%s) - T0)) s] $*" | tee -a "$OUT/summary.txt"; }
run_capped() { local c=$1; shift; timeout -k 10 -s INT "$(cap "$c")" "$@"; }
export PYTHONUNBUFFERED=1 PIP_NO_INDEX=1
export XDG_RUNTIME_DIR=/tmp/xdg
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}

{
  for f in .gpu/gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
  ldconfig
  nvidia-smi
  lscpu | grep -E "Model name|^CPU\(s\)"
  uptime
  python3 -m pip install -q --no-deps --no-compile .gpu/whl/*.whl
  python3 -m pip install -q --no-deps --no-build-isolation -e . -e plugins/numpy -e plugins/webgpu
  if ls .gpu/nd/ndplane_cuda-*.whl .gpu/nd/ndplane_cpu-*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-deps .gpu/nd/*.whl
  else
    export CMAKE_BUILD_PARALLEL_LEVEL=16
    python3 -m pip install -q --no-deps --no-build-isolation -e plugins/cpu -e plugins/cuda \
      -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=native
  fi
  ndplane backends
  ndplane info cuda
} > "$OUT/setup.log" 2>&1
log "setup: exit $? (setup.log)"

xdist=()
python3 -c "import xdist" 2>/dev/null && xdist=(-n "${JOBS:-6}")
conformance() {  # backend
  NDPLANE_FALLBACK=error run_capped 240 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider "${xdist[@]}" \
    --pyargs ndplane.conformance --ndplane-backend "$1" > "$OUT/conformance-$1.log" 2>&1
}
conformance cuda &
p1=$!
conformance webgpu &
p2=$!
run_capped 240 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider plugins/cuda/tests > "$OUT/plugin-cuda.log" 2>&1 &
p3=$!
wait $p1; log "conformance cuda: exit $? :: $(tail -n 1 "$OUT/conformance-cuda.log")"
wait $p2; log "conformance webgpu: exit $? :: $(tail -n 1 "$OUT/conformance-webgpu.log")"
wait $p3; log "cuda plugin tests: exit $? :: $(tail -n 1 "$OUT/plugin-cuda.log")"

BENCH_CAP=${BENCH_CAP:-150}
run_capped "$BENCH_CAP" python3 benchmarks/bench_cuda.py --rounds 5 --repeat 2 --json "$OUT/bench_cuda.json" \
  > "$OUT/bench_cuda.log" 2>&1
log "bench_cuda: exit $?"
if command -v nvcc >/dev/null; then  # take's kernel shapes, standalone (benchmarks/cuda/take_variants.cu)
  run_capped 90 bash -c 'nvcc -O3 -std=c++17 -arch=native -o /tmp/take_variants benchmarks/cuda/take_variants.cu &&
    /tmp/take_variants' > "$OUT/take_variants.log" 2>&1
  log "take_variants: exit $?"
fi
run_capped "$BENCH_CAP" python3 benchmarks/bench_webgpu.py --rounds 3 --json "$OUT/bench_webgpu.json" \
  > "$OUT/bench_webgpu.log" 2>&1
log "bench_webgpu: exit $?"
run_capped "$BENCH_CAP" python3 benchmarks/bench_webgpu_matmul.py --sizes 1024,4096 --repeat 3 \
  > "$OUT/bench_webgpu_matmul.log" 2>&1
log "bench_webgpu_matmul: exit $?"
if command -v compute-sanitizer >/dev/null; then
  NDPLANE_CUDA_NO_CACHE=1 run_capped 60 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 \
    python3 -m pytest -q -p no:cacheprovider plugins/cuda/tests/test_gpu.py -x \
    -k "add_contiguous or misaligned or strided_layouts or take_ or fused_rows or transposed or scans or argmax_rows" \
    > "$OUT/memcheck.log" 2>&1
  log "memcheck: exit $? :: $(grep -E 'ERROR SUMMARY|passed|failed' "$OUT/memcheck.log" | tail -n 2 | tr '\n' ' ')"
fi
# The 16 cores, one process per thread count (about 95 s each with --quick), the most wanted first.
for t in ${SCALING_THREADS:-16 1 4 8}; do
  (($(left) < 100)) && { log "bench_scaling: no time left for $t threads"; break; }
  run_capped 130 python3 benchmarks/bench_scaling.py --quick --threads "$t" --json "$OUT/scaling-$t.json" \
    > "$OUT/scaling-$t.log" 2>&1
  log "bench_scaling --quick --threads $t: exit $?"
done
uptime >> "$OUT/summary.txt"
log "end"
# NOTE: the device tool returns at most 8 files from $OUT: everything in one archive beside the summary.
tgz="$(mktemp -d)/gpu-session.tgz"
tar czf "$tgz" -C "$OUT" . && find "$OUT" -mindepth 1 ! -name summary.txt -delete && mv "$tgz" "$OUT/"
