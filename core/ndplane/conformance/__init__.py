"""The shared backend conformance suite, shipped with ndplane.

Run it on a backend with::

    pytest --pyargs ndplane.conformance --ndplane-backend NAME

Without ``--ndplane-backend`` it runs on every available backend (test-only
fake devices included). Every test is differential against NumPy.
"""
