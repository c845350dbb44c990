"""The link level named for a link-bound step is the same on every run, exact ties included (cost/step_bounds._link_level).

Before round 44 the candidate levels were taken from a ``set``, whose order follows the string hash seed, so two
levels of equal collective cost could swap names between runs. Expected values here are read off the inputs: each
level's collective time is 1 ms with weight 1, an exact tie, so the name is the level listed first.
"""

import numpy as np

from jalapeno.cost.step_bounds import _link_level


def _tie(levels):
    bound = np.array(["scale_up_link"], dtype=object)
    ct = np.array([[1e-3], [1e-3]])  # (collective rows, points): one collective per level, equal seconds
    cw = np.ones((2, 1))
    scope = np.array(["scale_up", "scale_up"], dtype=object)
    return _link_level(bound, ct, cw, scope, levels, 1)[0]


def test_exact_tie_goes_to_the_first_listed_level_in_either_order():
    assert _tie(["nvlink5", "nvlink5_mnnvl"]) == "nvlink5"
    assert _tie(["nvlink5_mnnvl", "nvlink5"]) == "nvlink5_mnnvl"


def test_the_costlier_level_is_named_whatever_its_place():
    bound = np.array(["scale_up_link", "compute"], dtype=object)
    ct = np.array([[1e-3, 1e-3], [3e-3, 3e-3]])
    scope = np.array(["scale_up", "scale_up"], dtype=object)
    out = _link_level(bound, ct, np.ones((2, 1)), scope, ["a", "b"], 2)
    assert out.tolist() == ["b", ""]  # 3 ms beats 1 ms; the compute-bound point names no link level
