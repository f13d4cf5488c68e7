"""PEP 517 backend: scikit-build-core, plus nvcc from NVIDIA's PyPI wheels when no CUDA
toolkit is installed, so ``pip install`` builds on a fresh machine without a GPU."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from scikit_build_core import build as _skbuild
from scikit_build_core.build import *  # noqa: F403 - the rest of the PEP 517 interface

# nvcc with its runtime headers and static runtime, and CCCL (CUB, Thrust, libcu++).
_TOOLKIT_WHEELS = ["nvidia-cuda-nvcc>=13,<14", "nvidia-cuda-runtime>=13,<14", "nvidia-cuda-cccl>=13,<14"]


def _has_toolkit() -> bool:
    if os.environ.get("CUDACXX") or shutil.which("nvcc"):
        return True
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    return (Path(home) / "bin" / "nvcc").exists()


def _extra() -> list[str]:
    return [] if _has_toolkit() else list(_TOOLKIT_WHEELS)


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    return [*_skbuild.get_requires_for_build_wheel(config_settings), *_extra()]


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    return [*_skbuild.get_requires_for_build_editable(config_settings), *_extra()]


def _point_cmake_at_wheels() -> None:
    if _has_toolkit():
        return
    try:
        import nvidia  # the namespace package of NVIDIA's wheels

        for root in nvidia.__path__:
            nvcc = Path(root) / "cu13" / "bin" / "nvcc"
            if nvcc.exists():
                os.environ["NDPLANE_WHEEL_CUDA_ROOT"] = str(nvcc.parent.parent)
                return
    except ImportError:
        pass


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                metadata_directory: str | None = None) -> str:
    _point_cmake_at_wheels()
    return _skbuild.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                   metadata_directory: str | None = None) -> str:
    _point_cmake_at_wheels()
    return _skbuild.build_editable(wheel_directory, config_settings, metadata_directory)
