"""Neural-network building blocks in PyTorch's shape: ``Module``, layers, ``functional``, ``init``."""

from __future__ import annotations

from . import functional, init
from .modules import (
    GELU,
    AvgPool2d,
    BatchNorm1d,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    LayerNorm,
    Linear,
    MaxPool2d,
    Module,
    Parameter,
    ReLU,
    Sequential,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)

__all__ = [
    "functional", "init", "AvgPool2d", "BatchNorm1d", "Conv2d", "Dropout", "Embedding", "Flatten", "GELU",
    "LayerNorm", "Linear", "MaxPool2d", "Module", "Parameter", "ReLU", "Sequential", "Sigmoid", "SiLU",
    "Softmax", "Tanh",
]  # fmt: skip
