"""scripts/inferencex_search_space.py reads InferenceX config entries as the benchmark runs them
(the concurrency steps of utils/matrix_logic/generate_sweep_configs.py, default --step-size 2)."""

from __future__ import annotations
from script_module import load_script


gen = load_script("inferencex_search_space")


def test_concurrency_steps_double_and_stop_at_conc_end():
    assert gen._concs({"conc-start": 4, "conc-end": 64}) == [4, 8, 16, 32, 64]
    assert gen._concs({"conc-start": 4, "conc-end": 48}) == [4, 8, 16, 32, 48]  # capped at conc-end
    assert gen._concs({"conc-start": 256, "conc-end": 256}) == [256]
    assert gen._concs({"conc-list": [1075, 512]}) == [1075, 512]


def test_layouts_workers_and_recipe_names():
    agg = gen._entry({"tp": 8, "ep": 8, "dp-attn": True, "conc-start": 128, "conc-end": 256})
    assert agg == "  { agg = { tp = 1, dp = 8, ep = 8 }, mtp = false, conc = [128, 256] },"
    dis = gen._entry({"spec-decoding": "mtp", "conc-list": [512],
                      "prefill": {"num-worker": 1, "tp": 4, "ep": 4, "dp-attn": True,
                                  "additional-settings": ["CONFIG_FILE=x/ctx1_gen1_dep16_batch32_eplb0_mtp3.yaml"]},
                      "decode": {"num-worker": 1, "tp": 16, "ep": 16, "dp-attn": True}})
    assert dis == ("  { prefill = { tp = 1, dp = 4, ep = 4, workers = 1 }, decode = { tp = 1, dp = 16, ep = 16, "
                   "workers = 1 }, mtp = true, max_batch = 32, mtp_draft = 3, conc = [512] },")
    # "Aggregated mode": no decode workers, the prefill worker serves both
    one = gen._entry({"conc-list": [4], "prefill": {"num-worker": 1, "tp": 8, "ep": 1},
                      "decode": {"num-worker": 0, "tp": 8, "ep": 1}})
    assert one == "  { agg = { tp = 8, dp = 1, ep = 1 }, mtp = false, conc = [4] },"


def test_placeholder_fields_are_left_out():
    # early entries: "tp: 1, ep: 1, dp-attn: true" under a comment saying DEP4; EP wider than the worker
    assert gen._entry({"conc-list": [4], "prefill": {"num-worker": 1, "tp": 1, "ep": 1, "dp-attn": True},
                       "decode": {"num-worker": 2, "tp": 1, "ep": 1, "dp-attn": True}}) is None
    assert gen._entry({"conc-list": [4], "prefill": {"num-worker": 5, "tp": 1, "ep": 8},
                       "decode": {"num-worker": 1, "tp": 1, "ep": 32}}) is None


def test_recipe_entries_take_the_recipes_benchmark_concurrencies():
    # an srt-slurm recipe's benchmark block (NVIDIA/srt-slurm @5063eb43 recipes/trtllm/h200/1k1k/mtp/
    # c512_ctx1_gen2_dep8_batch256_eplb0_mtp1.yaml: concurrencies "1024"; sa-bench also takes "AxB")
    text = 'benchmark:\n  type: "sa-bench"\n  isl: 1024\n  osl: 1024\n  concurrencies: "1024"\n  req_rate: "inf"\n'
    assert gen.recipe_concurrencies(text) == [1024]
    assert gen.recipe_concurrencies('benchmark:\n  concurrencies: "512x1024"\n') == [512, 1024]
    assert gen.recipe_concurrencies("benchmark:\n  isl: 1024\n") is None  # states none: the conc-list stays
    path = "recipes/trtllm/h200/1k1k/mtp/c512_ctx1_gen2_dep8_batch256_eplb0_mtp1.yaml"
    e = {"spec-decoding": "mtp", "conc-list": [512],
         "prefill": {"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": True, "additional-settings": [f"CONFIG_FILE={path}"]},
         "decode": {"num-worker": 2, "tp": 8, "ep": 8, "dp-attn": True}}
    ran = gen._entry(e, lambda p: [1024] if p == path else None)
    assert ran.endswith("max_batch = 256, mtp_draft = 1, conc = [1024] },")
    assert gen._entry(e).endswith("conc = [512] },")  # without the recipes: the conc-list
    assert gen._entry(e, lambda p: None).endswith("conc = [512] },")  # recipe not found: the conc-list


def test_sglang_recipe_entries_take_their_recipes_concurrencies_too():
    # the B200 runner (runners/launch_b200-dgxc-slurm.sh @2767db504b61) runs `srtctl apply -f $CONFIG_FILE`
    # for Dynamo-SGLang as for Dynamo-TRT: NVIDIA/srt-slurm @5063eb43 recipes/b200-fp8/8k1k/stp/
    # max-tpt-dep8-2p1d.yaml benchmarks concurrencies "256" where the config's conc-list says 256, 512, 1024
    path = "recipes/b200-fp8/8k1k/stp/max-tpt-dep8-2p1d.yaml"
    e = {"conc-list": [256, 512, 1024],
         "prefill": {"num-worker": 2, "tp": 8, "ep": 8, "dp-attn": True, "additional-settings": [f"CONFIG_FILE={path}"]},
         "decode": {"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": True}}
    assert gen._entry(e, lambda p: [256] if p == path else None) == (
        "  { prefill = { tp = 1, dp = 8, ep = 8, workers = 2 }, decode = { tp = 1, dp = 8, ep = 8, workers = 1 }, "
        "mtp = false, conc = [256] },")
    assert gen._entry(e).endswith("conc = [256, 512, 1024] },")  # without the recipes: the conc-list
    # a path outside the srt-slurm recipes is not looked up
    other = dict(e, prefill=dict(e["prefill"], **{"additional-settings": ["CONFIG_FILE=x/max-tpt-dep8-2p1d.yaml"]}))
    assert gen._entry(other, lambda p: [256]).endswith("conc = [256, 512, 1024] },")


def test_a_recipe_read_states_its_decode_max_batch_over_its_file_name():
    # NVIDIA/srt-slurm @5063eb43 recipes/trtllm/b200-fp4/8k1k/stp/ctx1_gen5_tep8_batch8_eplb0_mtp0.yaml sets
    # decode max_batch_size 16 (and prefill max_batch_size 2, which is not the decode worker's)
    recipe = ("backend:\n  trtllm_config:\n    prefill:\n      max_batch_size: 2\n"
              "    decode:\n      max_batch_size: 16\n      max_num_tokens: 16\n")
    path = "recipes/trtllm/b200-fp4/8k1k/stp/ctx1_gen5_tep8_batch8_eplb0_mtp0.yaml"
    e = {"conc-list": [10], "prefill": {"num-worker": 1, "tp": 4, "ep": 4, "dp-attn": True,
                                        "additional-settings": [f"CONFIG_FILE={path}"]},
         "decode": {"num-worker": 5, "tp": 8, "ep": 8, "dp-attn": False}}
    read = gen._entry(e, None, lambda p: gen.recipe_decode_max_batch(recipe) if p == path else None)
    assert "max_batch = 16, mtp_draft = 0" in read
    assert "max_batch = 8, mtp_draft = 0" in gen._entry(e)  # no recipe read: the name's
    assert "max_batch = 8, mtp_draft = 0" in gen._entry(e, None, lambda p: None)  # recipe not found: the name's


def test_a_2025_inline_entry_ran_its_conc_list_per_decode_worker_with_its_inline_cap():
    # InferenceX nvidia-master.yaml dsr1-fp4-gb200-dynamo-trt @c040b5cf2 (2025-12-19), 1k/1k without MTP: 4 decode
    # workers at TEP8, DECODE_MAX_BATCH_SIZE=128, conc-list [1, ..., 64, 141]; Dynamo's performance_sweeps bench.sh
    # benchmarks each value x num_gen_servers, so 141 ran 141 x 4 = 564 users (aiconfigurator's config_id 237 c564)
    e = {"conc-list": [1, 2, 4, 8, 16, 32, 64, 141],
         "prefill": {"num-worker": 1, "tp": 4, "ep": 4, "dp-attn": False,
                     "additional-settings": ["PREFILL_MAX_NUM_TOKENS=4608", "PREFILL_MAX_BATCH_SIZE=4"]},
         "decode": {"num-worker": 4, "tp": 8, "ep": 8, "dp-attn": False,
                    "additional-settings": ["DECODE_MAX_NUM_TOKENS=128", "DECODE_MAX_BATCH_SIZE=128",
                                            "DECODE_GPU_MEM_FRACTION=0.9", "DECODE_MTP_SIZE=0"]}}
    assert gen._entry(e) == (
        "  { prefill = { tp = 4, dp = 1, ep = 4, workers = 1 }, decode = { tp = 8, dp = 1, ep = 8, workers = 4 }, "
        "mtp = false, max_batch = 128, mtp_draft = 0, conc = [4, 8, 16, 32, 64, 128, 256, 564] },")
    # one decode worker (DEP32, DECODE_MTP_SIZE=3): the conc-list as is, the draft length from the inline setting
    dep = {"spec-decoding": "mtp", "conc-list": [512], "prefill": dict(e["prefill"], **{"dp-attn": True}),
           "decode": {"num-worker": 1, "tp": 32, "ep": 32, "dp-attn": True,
                      "additional-settings": ["DECODE_MAX_BATCH_SIZE=16", "DECODE_MTP_SIZE=3"]}}
    assert gen._entry(dep).endswith("mtp = true, max_batch = 16, mtp_draft = 3, conc = [512] },")
    # an entry naming a recipe is not the inline form, whatever else it sets
    named = dict(e, prefill=dict(e["prefill"], **{"additional-settings": ["CONFIG_FILE=recipes/trtllm/x/y.yaml"]}))
    assert gen._entry(named).endswith("mtp = false, conc = [1, 2, 4, 8, 16, 32, 64, 141] },")


def test_a_vllm_recipe_states_its_decode_max_num_seqs():
    # NVIDIA/srt-slurm @8294e64e recipes/vllm/kimi-k2.5/8k1k/disagg-gb200-1p4d-dep4-tep4.yaml: prefill max-num-seqs
    # 64 (not the decode worker's), decode max-num-seqs 16
    recipe = ("backend:\n  vllm_config:\n    prefill:\n      max-num-seqs: 64\n"
              "    decode:\n      tensor-parallel-size: 4\n      max-num-seqs: 16\n")
    assert gen.recipe_decode_max_batch(recipe) == 16
    path = "recipes/vllm/kimi-k2.5/8k1k/disagg-gb200-1p4d-dep4-tep4.yaml"
    e = {"conc-list": [4, 8, 16, 32, 128],
         "prefill": {"num-worker": 1, "tp": 4, "ep": 4, "dp-attn": True, "additional-settings": [f"CONFIG_FILE={path}"]},
         "decode": {"num-worker": 4, "tp": 4, "ep": 4, "dp-attn": False}}
    read = {path: gen.recipe_decode_max_batch(recipe)}
    assert gen._entry(e, None, read.get) == (
        "  { prefill = { tp = 1, dp = 4, ep = 4, workers = 1 }, decode = { tp = 4, dp = 1, ep = 4, workers = 4 }, "
        "mtp = false, max_batch = 16, mtp_draft = 0, conc = [4, 8, 16, 32, 128] },")
    assert gen._entry(e).endswith("mtp = false, conc = [4, 8, 16, 32, 128] },")  # without the recipes: no cap
    # an SGLang recipe path (no name, no vllm_config) takes no cap from the reader
    sgl = dict(e, prefill=dict(e["prefill"], **{"additional-settings": ["CONFIG_FILE=recipes/b200-fp8/x.yaml"]}))
    assert gen._entry(sgl, None, lambda p: 16).endswith("mtp = false, conc = [4, 8, 16, 32, 128] },")
