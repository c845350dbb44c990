"""scripts/aic_cfg227_memory.py: the budgets and weights it prints, by hand (docs/gap_aic_itl.md, config_id 227)."""

from __future__ import annotations

from script_module import load_script

mem = load_script("aic_cfg227_memory")


def test_budgets_and_fit_verdicts(capsys):
    mem.main()
    out = capsys.readouterr().out
    # 186e9 B = 173.2 GiB x 0.96 = 166.3 GiB; SGLang: (189,471 / 1024 - 2.5) x 0.95 = 182.53 x 0.95 = 173.4 GiB
    assert "173.2 GiB usable x 0.96 = 166.3 GiB" in out
    assert "(185.03 - 2.50 GiB) x 0.95 = 173.4 GiB" in out
    # DEP4 170.06 GiB, TP4 157.52 GiB (tests/unit/test_aic_dep_pools.py by hand): pools 173.4 - 170.1, 173.4 - 157.5
    assert "170.1 GiB a chip; fits the model's budget: False; SGLang's pool at m = 0.95: 3.3 GiB" in out
    assert "157.5 GiB a chip; fits the model's budget: True; SGLang's pool at m = 0.95: 15.9 GiB" in out
