"""Write measured-point rows (dicts keyed by the points file's columns) to a CSV for a test."""

from __future__ import annotations

import csv
from pathlib import Path


def write_rows(path: Path, rows: list[dict]) -> Path:
    """Write ``rows`` under the first row's columns (header first) to ``path``; returns ``path``."""
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path
