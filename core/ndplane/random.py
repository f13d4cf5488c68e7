"""Seeded random numbers: ``ndplane.random.default_rng(seed)`` (see :class:`Generator`)."""

from ._random import Generator, default_rng

__all__ = ["Generator", "default_rng"]
