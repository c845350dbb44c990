"""cost/collectives.LEVEL_KEY_TOPOLOGIES (which topology reads ``torus_dims`` / ``links_per_chip``; the note of
cli/system_notes.note_ignored_level_keys reads it) agrees with the pricing itself: a key changes some collective's
time on exactly the topologies the table names, on either level of a two-level system."""

from dataclasses import replace

import numpy as np
import pytest

from jalapeno.cost.collectives import COLLECTIVES, LEVEL_KEY_TOPOLOGIES, collective_time
from jalapeno.cost.pricer import load_pricer
from jalapeno.specs.system_file import TOPOLOGIES

#: two values of each key a level of ``chips`` chips may take (torus shapes of the same size)
VALUES = {"links_per_chip": lambda chips: (7, 3),
          "torus_dims": lambda chips: ((2, 2, 2), (1, 2, 4)) if chips == 8 else ((16, 16, 32), (8, 32, 32))}
GROUPS = (2, 4, 8, 16, 64)  # inside the 8-chip node, and across it (hierarchical, flat over the cluster)


def _times(system, eff) -> np.ndarray:
    m = np.array([4e3, 1e6, 64e6])
    return np.concatenate([collective_time(k, g, m, system, eff, p).time_s
                           for k in COLLECTIVES for g in GROUPS for p in ("packed", "spread")])


def _readers(key: str, index: int) -> set[str]:
    pr = load_pricer("mi300x")  # node: 8 chips (full_mesh), cluster: 8192 (fat_tree)
    out = set()
    for topo in TOPOLOGIES:
        t = []
        for value in VALUES[key](pr.system.levels[index].chips):
            base = {"links_per_chip": 7, "torus_dims": VALUES["torus_dims"](pr.system.levels[index].chips)[0],
                    "topology": topo, key: value}
            levels = list(pr.system.levels)
            levels[index] = replace(levels[index], **base)
            t.append(_times(replace(pr.system, levels=tuple(levels)), pr.efficiency))
        if not np.array_equal(*t):
            out.add(topo)
    return out


@pytest.mark.parametrize("key", sorted(LEVEL_KEY_TOPOLOGIES))
def test_the_table_names_the_topologies_the_pricing_reads(key):
    assert _readers(key, 0) | _readers(key, 1) == set(LEVEL_KEY_TOPOLOGIES[key])
