"""The shipped data's digest as the provenance lines define it, computed in the tests (not read from the code).

Used by tests/cli/test_ux52.py (the report page's Reproduce section) and tests/cli/test_followup52.py (the chart's).
"""

import hashlib
from importlib import resources


def shipped_digest(folder: str) -> str:
    """SHA-256 over ``jalapeno/data/<folder>``'s .toml files in name order, each file's name then its bytes, the first
    12 hex digits: the definition the Reproduce lines state (``systems <digest>, calibration <digest>``)."""
    h = hashlib.sha256()
    root = resources.files("jalapeno") / "data" / folder
    for f in sorted((p for p in root.iterdir() if p.name.endswith(".toml")), key=lambda p: p.name):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]
