# _build/ is the PEP 517 backend (it imports scikit-build-core, present only while building).
collect_ignore = ["_build"]
