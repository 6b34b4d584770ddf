"""pytest suite for analysis/ (synthetic data only; run: python -m pytest -q analysis/tests)."""
