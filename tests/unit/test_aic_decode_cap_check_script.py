"""scripts/aic_decode_cap_check.py: the recipe caps and the 2025 inline form (values by hand)."""

from __future__ import annotations

from script_module import load_script

dc = load_script("aic_decode_cap_check")


def test_recipe_cap_reads_each_engine():
    assert dc.recipe_cap({"backend": {"trtllm_config": {"decode": {"max_batch_size": 8}}}}) == 8
    assert dc.recipe_cap({"backend": {"vllm_config": {"decode": {"max-num-seqs": 16}}}}) == 16
    assert dc.recipe_cap({"backend": {"sglang_config": {"decode": {"cuda-graph-max-bs": 256}}}}) is None


def test_configuration_caps_from_recipes_and_inline():
    recipes = {"r/ctx1_gen4_tep8_batch32_eplb0_mtp0.yaml": {"backend": {"trtllm_config": {"decode": {"max_batch_size": 32}}}}}
    cfg = {"seq-len-configs": [{"isl": 1024, "osl": 1024, "search-space": [
        # a 2026 entry: its recipe file's decode max_batch_size, the conc-list as run
        {"conc-list": [12, 192], "prefill": {"additional-settings": ["CONFIG_FILE=r/ctx1_gen4_tep8_batch32_eplb0_mtp0.yaml"]},
         "decode": {"num-worker": 4, "tp": 8}},
        # a 2025 entry: the cap inline, the conc-list per decode worker (141 x 3 = 423)
        {"conc-list": [141], "prefill": {}, "decode": {"num-worker": 3, "tp": 8,
                                                       "additional-settings": ["DECODE_MAX_BATCH_SIZE=128"]}},
        # MTP entries and entries whose recipe is not stored are left out
        {"spec-decoding": "mtp", "conc-list": [4], "prefill": {}, "decode": {"num-worker": 4, "tp": 8,
                                                                            "additional-settings": ["DECODE_MAX_BATCH_SIZE=8"]}},
        {"conc-list": [5], "prefill": {"additional-settings": ["CONFIG_FILE=r/missing.yaml"]},
         "decode": {"num-worker": 4, "tp": 8}}]}]}
    assert dc.configuration_caps(cfg, recipes.get) == [
        (1024, 1024, 4, 8, [12, 192], 32, "ctx1_gen4_tep8_batch32_eplb0_mtp0.yaml"),
        (1024, 1024, 3, 8, [423], 128, "DECODE_MAX_BATCH_SIZE=128")]
