"""A bounded time series of the simulation: running, waiting and KV occupancy in fixed bins.

One sample per simulated step would grow without bound (a million-request trace runs about a
million steps). Samples are instead averaged into at most ``max_bins`` bins of equal width; when
the simulation runs past the last bin, the width doubles and neighbouring bins merge (sums and
counts add), so memory is O(max_bins) and every bin is the mean of the steps that ended in it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

COLUMNS = ("running", "waiting", "kv_occupancy")


class BinnedSeries:
    """Accumulates (t_s, running, waiting, kv_occupancy) samples into bins.

    Args:
        max_bins: most bins kept (even, >= 2).
        width_s: initial bin width (doubles as needed).
    """

    def __init__(self, max_bins: int = 2048, width_s: float = 0.01) -> None:
        assert max_bins >= 2 and max_bins % 2 == 0
        self.max_bins, self.width_s = max_bins, width_s
        self.sums = np.zeros((max_bins, len(COLUMNS)))
        self.counts = np.zeros(max_bins, dtype=np.int64)

    def add(self, t_s: float, running: float, waiting: float, kv_occupancy: float) -> None:
        """Add one sample at simulated time ``t_s`` (>= 0)."""
        k = int(t_s / self.width_s)
        while k >= self.max_bins:
            self._coarsen()
            k = int(t_s / self.width_s)
        row = self.sums[k]
        row[0] += running
        row[1] += waiting
        row[2] += kv_occupancy
        self.counts[k] += 1

    def _coarsen(self) -> None:
        half = self.max_bins // 2
        self.sums[:half] = self.sums[0::2] + self.sums[1::2]
        self.sums[half:] = 0.0
        self.counts[:half] = self.counts[0::2] + self.counts[1::2]
        self.counts[half:] = 0
        self.width_s *= 2

    def frame(self) -> pd.DataFrame:
        """The non-empty bins: ``t_s`` (bin centre) and the mean of each column, in time order."""
        keep = self.counts > 0
        mean = self.sums[keep] / self.counts[keep, None]
        t = (np.flatnonzero(keep) + 0.5) * self.width_s
        return pd.DataFrame({"t_s": t, **{c: mean[:, i] for i, c in enumerate(COLUMNS)}})
