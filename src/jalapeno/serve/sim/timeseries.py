"""A bounded time series of the simulation: running, waiting and KV occupancy in fixed bins.

One sample per simulated step would grow without bound (a million-request trace runs about a
million steps). Samples are instead averaged into at most ``max_bins`` bins of equal width; when
the simulation runs past the last bin, the width doubles and neighbouring bins merge (sums and
counts add), so memory is O(max_bins) and every bin is the mean of the steps that ended in it.
The bins are plain Python lists (a sample a step: a numpy scalar update costs ~10x a float add;
the sums are the same float64 additions in the same order either way).
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
        self._run = [0.0] * max_bins
        self._wait = [0.0] * max_bins
        self._kv = [0.0] * max_bins
        self._n = [0] * max_bins

    @property
    def sums(self) -> np.ndarray:
        """(max_bins, 3) sums of each column per bin."""
        return np.array([self._run, self._wait, self._kv], dtype=float).T

    @property
    def counts(self) -> np.ndarray:
        """Samples per bin."""
        return np.array(self._n, dtype=np.int64)

    def add(self, t_s: float, running: float, waiting: float, kv_occupancy: float) -> None:
        """Add one sample at simulated time ``t_s`` (>= 0)."""
        k = int(t_s / self.width_s)
        while k >= self.max_bins:
            self._coarsen()
            k = int(t_s / self.width_s)
        self._run[k] += running
        self._wait[k] += waiting
        self._kv[k] += kv_occupancy
        self._n[k] += 1

    def _coarsen(self) -> None:
        half = self.max_bins // 2
        for col, zero in ((self._run, 0.0), (self._wait, 0.0), (self._kv, 0.0), (self._n, 0)):
            col[:half] = [a + b for a, b in zip(col[0::2], col[1::2])]
            col[half:] = [zero] * half
        self.width_s *= 2

    def frame(self) -> pd.DataFrame:
        """The non-empty bins: ``t_s`` (bin centre) and the mean of each column, in time order."""
        counts = self.counts
        keep = counts > 0
        mean = self.sums[keep] / counts[keep, None]
        t = (np.flatnonzero(keep) + 0.5) * self.width_s
        return pd.DataFrame({"t_s": t, **{c: mean[:, i] for i, c in enumerate(COLUMNS)}})
