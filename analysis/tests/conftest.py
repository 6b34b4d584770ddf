"""pytest setup for analysis/tests: make `import analysis` work from anywhere.

The repository root (two levels up) goes on sys.path, so the tests import
the same modules that `python analysis/reproduce.py` runs.
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
