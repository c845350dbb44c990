"""SGLang's NVFP4 all-gather MoE exchange on the srt-slurm DEP4 prefill pools (round 44, moeag44).

SGLang with no ``--moe-a2a-backend``, ``--moe-runner-backend flashinfer_cutlass``, modelopt_fp4, DP attention and
MoE EP = attention DP quantises the tokens to NVFP4, all-gathers them and reduce-scatters the BF16 outputs
(sgl-project/sglang moe/utils.py @d737979c should_use_flashinfer_cutlass_moe_fp4_allgather). The srt-slurm
@5063eb43 gb200-fp4 / gb300-fp4 1k1k mid-curve recipes run their DEP4 prefill pools so, their DEP32 decode pools
with DeepEP.

Expected bytes by hand: every token of the EP group x hidden 7168 (DeepSeek-R1 config.json) x (0.5 + 1/16) bytes
(NVFP4: 4 bits + an FP8 scale per 16 elements) gathered, x 2 bytes (BF16) scattered.
"""

from __future__ import annotations

import numpy as np
import pytest

from jalapeno.cost.pricer import load_pricer
from jalapeno.cost.pool_backends import with_pool_backends
from jalapeno.cost.step import Batch, step_cost
from jalapeno.deploy.deployment import Deployment, Pool
from jalapeno.deploy.layout import Layout
from jalapeno.errors import SpecError
from jalapeno.fit.aic_moe_exchange import with_prefill_moe_exchange
from jalapeno.specs.catalog import load_model
from jalapeno.specs.formats import get_precision

H = 7168


def _dep(prefill: Layout) -> Deployment:
    return Deployment(get_precision("fp4"), Pool(Layout(dp=32, ep=32)), prefill=Pool(prefill, 4))


def _prefill_colls(pool: Pool, tokens: float) -> dict[str, float]:
    model = load_model("deepseek-r1")
    pr = with_pool_backends(load_pricer("gb300-nvl72", stack="sglang"), pool, model, pool.layout)
    sc = step_cost(
        model,
        pr,
        pool.layout,
        get_precision("fp4"),
        Batch.make(
            prefill_tokens=np.array([tokens]), prefill_seqs=np.array([tokens / 1024]), prefill_ctx=np.array([0.0])
        ),
    )
    c = sc.collectives
    return {n: float(c.bytes[i][0]) for i, n in enumerate(c.name) if n.startswith("moe.")}


def test_recipe_rows_take_the_gather_on_the_prefill_pool_only():
    for system, release in (("gb200-nvl72", "0.5.8"), ("gb300-nvl72", "0.5.8.post1")):
        d, note = with_prefill_moe_exchange(
            _dep(Layout(dp=4, ep=4)), "sglang", system, "fp4", release, on=True, decode_dispatch=False
        )
        assert d.prefill.moe_exchange == "nvfp4_all_gather" and d.decode.moe_exchange is None
        assert "srt-slurm" in note
        d = with_prefill_moe_exchange(
            _dep(Layout(dp=4, ep=4)), "sglang", system, "fp4", release, on=False, decode_dispatch=True
        )[0]
        assert d.prefill.moe_exchange is None and d.decode.moe_exchange == "all_to_all_nvfp4"


@pytest.mark.parametrize(
    "args",
    [
        ("sglang", "gb200-nvl72", "fp4", "0.5.5.post2"),  # Dynamo's own scripts: --enable-deepep-moe
        ("sglang", "gb200-nvl72", "fp8", "0.5.8"),  # FP8 recipes run DeepEP on both pools
        ("trtllm", "gb300-nvl72", "fp4", "0.5.8.post1"),
        ("sglang", "b200", "fp4", "0.5.8"),
    ],
)
def test_other_rows_keep_the_stack_exchange(args):
    d = _dep(Layout(dp=4, ep=4))
    assert with_prefill_moe_exchange(d, *args, on=True, decode_dispatch=True) == (d, "")


def test_tp_prefill_pool_and_switch_off_keep_the_stack_exchange():
    tp4 = _dep(Layout(tp=4, ep=1))  # the 8k1k / low-latency recipes: TP4 prefill, no DP attention
    got = with_prefill_moe_exchange(tp4, "sglang", "gb300-nvl72", "fp4", "0.5.8.post1", on=True, decode_dispatch=False)
    assert got == (tp4, "")
    dep4 = _dep(Layout(dp=4, ep=4))
    off = with_prefill_moe_exchange(
        dep4, "sglang", "gb300-nvl72", "fp4", "0.5.8.post1", on=False, decode_dispatch=False
    )
    assert off == (dep4, "")


def test_gathered_pool_prices_nvfp4_gather_and_bf16_scatter():
    tokens = 4 * 2048.0  # 2,048 a rank over DEP4
    got = _prefill_colls(Pool(Layout(dp=4, ep=4), moe_exchange="nvfp4_all_gather"), tokens)
    assert set(got) == {"moe.all_gather", "moe.reduce_scatter"}
    assert got["moe.all_gather"] == pytest.approx(tokens * H * 0.5625)
    assert got["moe.reduce_scatter"] == pytest.approx(tokens * H * 2)
    assert "moe.dispatch" in _prefill_colls(Pool(Layout(dp=4, ep=4)), tokens)  # the stack's DeepEP all-to-all


def test_bad_pool_exchange_is_one_clear_error():
    with pytest.raises(SpecError, match="pool.moe_exchange.*'deepep'.*nvfp4_all_gather"):
        Pool(Layout(dp=4, ep=4), moe_exchange="deepep")
    assert Pool(Layout(dp=4, ep=4), moe_exchange="nvfp4_all_gather").as_dict()["moe_exchange"] == "nvfp4_all_gather"


def _decode_colls(pool: Pool, seqs: float) -> dict[str, float]:
    model = load_model("deepseek-r1")
    pr = with_pool_backends(load_pricer("gb300-nvl72", stack="sglang"), pool, model, pool.layout)
    sc = step_cost(
        model, pr, pool.layout, get_precision("fp4"), Batch.make(decode_seqs=np.array([seqs]), decode_ctx=1500.0)
    )
    c = sc.collectives
    return {n: float(c.bytes[i][0]) for i, n in enumerate(c.name) if n.startswith("moe.")}


def test_nvfp4_dispatch_sends_0_5625_of_a_byte_where_deepep_sends_one():
    # DeepEP's low-latency dispatch sends each decode token once per selected expert in both cases; only the
    # element size changes: NVFP4 (0.5 + 1/16) against FP8 (1), the BF16 combine unchanged
    lay = Layout(dp=32, ep=32)
    fp8 = _decode_colls(Pool(lay), 32 * 128.0)
    nv = _decode_colls(Pool(lay, moe_exchange="all_to_all_nvfp4"), 32 * 128.0)
    assert nv["moe.dispatch"] == pytest.approx(fp8["moe.dispatch"] * 0.5625)
    assert nv["moe.combine"] == pytest.approx(fp8["moe.combine"])
    assert fp8["moe.combine"] == pytest.approx(2 * fp8["moe.dispatch"])  # BF16 back, FP8 out: the same vectors


def test_b200_recipes_flashinfer_trtllm_keep_the_stacks_exchange():
    """The B200 Dynamo-SGLang recipe (InferenceX srt-slurm-recipes/sglang/dsr1/b200-fp4/** @e0e00cdeb11e: DEP4
    prefill, DEP8 decode, moe-runner-backend flashinfer_trtllm on both pools) fails SGLang's flashinfer_cutlass
    condition, so PREFILL_GATHER lists no B200 release: the rule leaves its rows alone even with both switches on
    (round 44, exch44; docs/model.md §3.8)."""
    dep = Deployment(get_precision("fp4"), Pool(Layout(dp=8, ep=8)), prefill=Pool(Layout(dp=4, ep=4), 1))
    out, note = with_prefill_moe_exchange(dep, "sglang", "b200", "fp4", "0.5.12.post1", on=True, decode_dispatch=True)
    assert out is dep and note == ""


def test_no_inferencex_gb200_gb300_sglang_row_escapes_the_rule():
    """The rule reaches GB200 / GB300 SGLang FP4 runs only through aiconfigurator rows; the InferenceX points hold
    none (round 44, exch44). A new such row would run the srt-slurm recipes the rule names (InferenceX
    dsr1-fp4-gb{2,3}00-dynamo-sglang: CONFIG_FILE=recipes/gb{2,3}00-fp4/...), so it must take the rule too."""
    import csv
    from pathlib import Path

    import jalapeno

    path = Path(jalapeno.__file__).parent / "data" / "validation" / "inferencex_points.csv"
    with path.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["hardware"].startswith(("GB200", "GB300"))]
    assert rows, "the InferenceX points hold GB200 / GB300 rows (TRT-LLM); the filter reads the right column"
    sglang = [r for r in rows if "sglang" in r["framework"].lower()]
    assert not sglang, f"{len(sglang)} GB200/GB300 SGLang InferenceX rows: apply fit/aic_moe_exchange's rule to them"
