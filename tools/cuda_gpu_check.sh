#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, from the project root: build ndplane-cuda for this GPU, run
# the conformance suite on `cuda` with NDPLANE_FALLBACK=error, the plugin's own tests, and a
# compute-sanitizer memcheck of a small subset and benchmarks/bench_cuda.py (ndplane vs PyTorch);
# logs and results go to one folder.
#   tools/cuda_gpu_check.sh [OUT]      (default: $OUT, else /tmp/out)
set -uo pipefail
out="${1:-${OUT:-/tmp/out}}"
mkdir -p "$out"
cd "$(dirname "$0")/.."
{
  nvidia-smi || true
  NDPLANE_CUDA_ARCHITECTURES=native pip install --no-build-isolation -q -e plugins/cuda 2>&1 | tail -20
  ndplane backends
  ndplane info cuda
} > "$out/setup.log" 2>&1
python -m pytest -q -p no:cacheprovider plugins/cuda/tests --junitxml="$out/plugin.xml" > "$out/plugin.log" 2>&1
echo "plugin tests: exit $?" | tee -a "$out/summary.txt"
NDPLANE_FALLBACK=error python -m pytest -q -p no:cacheprovider -n "${JOBS:-8}" --pyargs ndplane.conformance \
  --ndplane-backend cuda --junitxml="$out/conformance.xml" > "$out/conformance.log" 2>&1
echo "conformance (NDPLANE_FALLBACK=error): exit $?" | tee -a "$out/summary.txt"
if command -v compute-sanitizer >/dev/null; then
  NDPLANE_CUDA_NO_CACHE=1 compute-sanitizer --tool memcheck --error-exitcode 9 \
    python -m pytest -q -p no:cacheprovider plugins/cuda/tests/test_gpu.py -x > "$out/memcheck.log" 2>&1
  echo "compute-sanitizer memcheck: exit $?" | tee -a "$out/summary.txt"
fi
python benchmarks/bench_cuda.py --json "$out/bench_cuda.json" > "$out/bench_cuda.log" 2>&1
echo "bench_cuda: exit $?" | tee -a "$out/summary.txt"
tail -3 "$out"/*.log >> "$out/summary.txt"
