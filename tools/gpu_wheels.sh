#!/usr/bin/env bash
# On the build machine, from the project root, before a session on a GPU machine: builds the cpu
# and cuda plugins as CPython 3.12 wheels into .gpu/nd/ (ignored by git), so the GPU machine's
# scarce minutes go to runs, not to compiling; tools/gpu_session.sh installs them there.
#   bash tools/gpu_wheels.sh            # cuda for sm_90 (H100, H200)
#   CUDA_ARCH=80 bash tools/gpu_wheels.sh
# Needs a CPython 3.12 (python3.12 on PATH, or pyenv's) and nvcc; about 3 minutes for cuda and 8
# for cpu on 2 cores. Also fetches the core's dependencies the GPU machine's image lacks
# (safetensors) into .gpu/whl/, beside what ../shared/gpu/prepare.sh puts there.
set -euo pipefail
[ -f pyproject.toml ] && [ -d plugins ] || { echo "run this from the project root" >&2; exit 2; }
py=$(command -v python3.12 || true)
if [ -z "$py" ] || ! "$py" -V >/dev/null 2>&1; then
  py=$(ls -d "$(pyenv root 2>/dev/null || echo ~/.pyenv)"/versions/3.12*/bin/python3.12 2>/dev/null | tail -1)
fi
[ -n "$py" ] || { echo "gpu_wheels.sh: no CPython 3.12 found (the GPU machine runs 3.12)" >&2; exit 2; }
venv=${TMPDIR:-/tmp}/ndplane-py312
[ -x "$venv/bin/pip" ] || "$py" -m venv "$venv"
"$venv/bin/pip" install -q scikit-build-core nanobind cmake ninja scipy-openblas32
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
mkdir -p .gpu/nd .gpu/whl
rm -f .gpu/nd/*.whl
"$venv/bin/pip" wheel -q --no-deps --no-build-isolation plugins/cuda -w .gpu/nd \
  -Ccmake.define.CMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -Cbuild-dir="${TMPDIR:-/tmp}/ndplane-gpu-cuda"
"$venv/bin/pip" wheel -q --no-deps --no-build-isolation plugins/cpu -w .gpu/nd -Cbuild-dir="${TMPDIR:-/tmp}/ndplane-gpu-cpu"
plat="--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64"
# shellcheck disable=SC2086
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp $plat \
  -d .gpu/whl safetensors pytest-xdist execnet
ls -la .gpu/nd
