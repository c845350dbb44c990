"""scripts/routing_generated_whatif.py: the generated-token routing it loads, v2's busiest-rank share, its fits."""

from __future__ import annotations

import pytest
from script_module import load_script

from jalapeno.cost import ops
from jalapeno.deploy import eplb
from jalapeno.specs import catalog, stacks

script = load_script("routing_generated_whatif")


@pytest.fixture
def restored(monkeypatch):
    """Every attribute the script replaces is put back after the test (monkeypatch restores what it set)."""
    for mod, name in ((catalog, "load_model"), (ops, "busiest_rank_share"), (stacks, "load_stacks")):
        monkeypatch.setattr(mod, name, getattr(mod, name))
    monkeypatch.setattr(script, "VARIANT", "v2")
    return monkeypatch


def test_aux_loss_free_models_get_the_measured_sigma_on_generated_tokens_only(restored):
    script._patch(None)
    ds = catalog.load_model("deepseek-r1").moe
    assert (ds.routing_sigma, ds.decode_routing_sigma) == (0.0, 1.03)  # specs/routing.MEASURED_ROUTING_SIGMA
    assert catalog.load_model("gpt-oss-120b").moe.decode_routing_sigma == 0.0  # auxiliary-loss router: uniform


def test_v2_keeps_the_busiest_rank_share_uniform(restored):
    script._patch(None)
    # 256 experts on 8 ranks, 32 each in id order: uniform share 32/256 = 0.125 whatever the σ asked for
    assert ops.busiest_rank_share(256, 1.03, 8, None) == pytest.approx(0.125)
    # what v1 (the shipped mode) uses instead: q·ep = 1.37 at EP8 (docs/model.md §3.6)
    assert eplb.busiest_rank_share(256, 1.03, 8, None) * 8 == pytest.approx(1.37, abs=0.01)


def test_fits_file_replaces_the_fitted_values(restored, tmp_path):
    f = tmp_path / "fits.toml"
    f.write_text('[fits."sglang"]\nvalues = { "step_overhead_s" = 0.00123 }\n')
    script._patch(str(f))
    assert stacks.load_stacks(True)["sglang"].step_overhead_s == pytest.approx(0.00123)


def test_unknown_variant_is_named(restored):
    restored.setattr(script, "VARIANT", "v3")
    with pytest.raises(SystemExit, match="ROUTING_VARIANT"):
        script._patch(None)
