"""Runnable example programs, shipped with ndplane so ``ndplane demo`` can run them.

- ``python -m ndplane.examples.linear_regression``: fit y = 2x + 1 + noise with SGD;
- ``python -m ndplane.examples.digits_mlp``: an MLP on scikit-learn's digits (``ndplane demo``);
- ``python -m ndplane.examples.digits_cnn``: a small CNN on the same data.

Each takes ``--device``; the digits examples need ``pip install scikit-learn tqdm``
(``pip install ndplane[demo]``).
"""
