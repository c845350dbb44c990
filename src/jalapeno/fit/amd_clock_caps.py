"""The GPU clock caps AMD's MLPerf Llama-2-70B harness declares, as a compute clock of the rows it ran (issue 18;
docs/gap_large_batch_decode.md "Round 55 (mlperf55)").

Every AMD-harness Llama-2-70B run sources ``scripts/power_settings.sh <model> <gpu> <scenario>`` before ``main.py``
(mlcommons/inference_results_v5.1 @965182b, ``closed/AMD/code/llama2-70b-99/{run_harness.sh,scripts/power_settings.sh}``;
the same file, byte for byte, in the ASUSTeK ``code_AMD``, Dell, GigaComputing, MiTAC and Quanta_Cloud_Technology code
trees). On gfx942 it puts each GPU in performance-determinism mode at a maximum GFX clock per scenario (``rocm-smi
--setperfdeterminism MHZ``: "PMFW tries to maintain sustained performance level ... a max GFX frequency needs to be
specified in this mode", Linux 6be6424684cb); on MI355X it sets nothing. Round 53 (amdmlperf53) read the caps and found
the measured MI325X / MI300X pair at the cap ratio (Offline 1.244 against 1.214, Server 1.302 against 1.231; the
model's 1.01-1.03 has neither) and both Offline rows asking for one calibration clock (~1,600 MHz); it built nothing
because that clock would have come from the two validation rows.

Mechanism (:data:`MLPERF_AMD_CLOCK_CAP_ON`): a row of :data:`CLOCK_CAPS` prices its compute at the cap. An op at or
above cost/roofline.DENSE_UTILISATION of its format's peak (the ops a board's power holds below boost, round 26's named
assumption) runs at cap / :data:`GFX942_DENSE_CALIBRATION_MHZ` of its calibrated speed; a lighter op, which the
calibration prices unthrottled, at cap / :data:`GFX942_BOOST_MHZ` (cost/roofline.capped_clock; Chip.clock_cap).
Memory, launches and collectives do not move.

:data:`GFX942_DENSE_CALIBRATION_MHZ` is fitted on the declared fit split, the peer runs: every v5.1 closed Offline
Llama-2-70B (99) run of the AMD harness on MI300X / MI325X by a submitter other than AMD (scripts/amd_clock_cap55.py,
:data:`PEER_OFFLINE_RUNS`), each chip one group weighted equally, the clock that leaves zero mean error. The AMD
validation rows are not in it. The Server rows (caps 1,300 / 1,600 MHz, not in the fit) test it.

Figures (``validate --mlperf --held-out``, off -> on; only the 7 AMD MI300X / MI325X rows move, no InferenceX or
aiconfigurator row): MI300X Offline +13.7 -> -1.5%, Server +21.4 -> -1.4%, Interactive +46.5 -> +18.8%; MI325X Offline
-5.8 / -5.9 -> -3.3 / -3.4%, Server -5.6 -> -8.0%, Interactive -28.8 -> -28.0%. Goals (median / p90 / bias %): MLPerf
MI300X 21.4 / 41.5 / +21.4 -> 1.5 / 15.3 / -1.4 (met), MI325X 5.9 / 21.9 / -5.9 -> 5.7 / 22.0 / -5.7, ALL 8.2 / 40.6 /
-0.0 -> 7.7 / 38.4 / -1.4; MISS lines 18 -> 17. mlperf55 shipped it OFF by round 55's rule (c): ALL's bias moves 1.4
points from zero (the MI300X rows that had balanced the under-priced ones now sit at -1.4%), within its +-5% goal but
past the rule's 0.5 point (round 54's early stopping was held off for 1.6 points of ALL bias). The lead turned it ON
(:data:`MLPERF_AMD_CLOCK_CAP_ON`): it clears MI300X's every MLPerf MISS figure and ALL's median, where early stopping
moved no MISS line. Not stacked with cost/roofline.POWER_CLOCK (shipped off), which would slow the same MI300X dense ops
by Chip.dense_clock_ratio a second time.
"""

from __future__ import annotations

#: (chip, MLPerf scenario) -> the performance-determinism max GFX clock (MHz) ``power_settings.sh`` sets for
#: Llama-2-70B (mlcommons/inference_results_v5.1 @965182b closed/AMD/code/llama2-70b-99/scripts/power_settings.sh,
#: functions ``llama2-70b_{offline,server,interactive}``; MI355X: "no power setting found"). The same table as
#: scripts/amd_clock_caps53.CLOCK_CAPS (which also carries the SoC P-states, not priced: no source gives their effect)
CLOCK_CAPS = {
    ("mi300x", "Offline"): 1400.0,
    ("mi300x", "Server"): 1300.0,
    ("mi300x", "Interactive"): 2000.0,
    ("mi325x", "Offline"): 1700.0,
    ("mi325x", "Server"): 1600.0,
    ("mi325x", "Interactive"): 1700.0,
}
#: the MLPerf submitters whose Llama-2-70B code tree runs AMD's ``power_settings.sh`` (the validation rows' own: AMD)
CAPPED_SUBMITTERS = ("AMD",)
#: gfx942 (MI300X / MI325X) boost clock, MHz: the clock the datasheets' peaks assume (AMD Instinct MI300X / MI325X
#: data sheets, 2,100 MHz peak engine clock), the calibration's clock for ops under DENSE_UTILISATION
GFX942_BOOST_MHZ = 2100.0
#: the clock (MHz) the gfx942 dense-op calibration carries, fitted on the peer runs (:data:`PEER_OFFLINE_RUNS`;
#: scripts/amd_clock_cap55.py --fit: 1,649 MHz, bisection to 1 MHz; at 1,600 the peers read +3.0% MI300X, +0.9 / +1.7 /
#: +4.7% MI325X). A fitted constant, not a measured clock. Its reading: round 42 found every gfx942-timed family both
#: chips' sets read was tuned on MI300X (aiter PR #365's block-scale rows; scripts/gfx942_table_clock.py) and that the
#: tables carry their tuning board's clock, so this is the clock MI300X held while those rows were timed (between its
#: 1,230 MHz max-achievable-FLOPs median and its 2,100 MHz boost)
GFX942_DENSE_CALIBRATION_MHZ = 1649.0
#: whether the AMD Llama-2-70B MLPerf rows price their compute at their declared clock cap (:func:`clock_cap_of`).
#: Shipped ON (round 55, the lead's call on mlperf55's figures): MLPerf MISS lines 18 -> 17 (MI300X meets every goal),
#: ALL's median 8.2 -> 7.7 (met); ALL's bias -0.0 -> -1.4% stays within its +/-5% goal (off restores the old figures)
MLPERF_AMD_CLOCK_CAP_ON = True

#: the fit split: (submitter, system, chip, Offline tokens per second, samples per second) of every v5.1 closed
#: Llama-2-70B (99) Offline run of the AMD harness at AMD's own engine, by a submitter other than AMD (LoadGen
#: mlperf_log_summary.txt, closed/<submitter>/results/<system>/llama2-70b-99/Offline/performance/run_1 @965182b; their
#: ``power_settings.sh`` is AMD's, and their ``offline_mi3xxx.yaml`` differs from AMD's only in the harness's sample
#: ``sorting``). Left out: GigaComputing and Vultr MI325X (another engine: target decode batch 2,000, 11 scheduler steps,
#: no ``VLLM_MLPERF_SWIZZLE_FP8_LINEAR``), MangoBoost / Dell_MangoBoost / Supermicro (no power_settings.sh in their trees)
PEER_OFFLINE_RUNS = (
    ("Dell", "XE9680_MI300X_192GBx8", "mi300x", 27325.9, 90.5808),
    ("ASUSTeK", "ESC_A8A_MI325X_256GBx8", "mi325x", 33987.4, 112.869),
    ("MiTAC", "8xMI325X_2xEPYC_9755", "mi325x", 33703.0, 111.994),
    ("Quanta_Cloud_Technology", "D75T-7U_8xMI325X", "mi325x", 32760.5, 108.888),
)
#: the AMD validation runs' own Offline figures (tokens / s, samples / s; the same summaries): a peer's throughput per
#: chip is its validation row's times the ratio of their tokens per second (same engine, same dataset: mean output
#: 301.7 / 301.7 tokens on MI300X, 301.0 / 300.9-301.1 on MI325X)
AMD_OFFLINE_RUNS = {
    "mi300x": ("mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Offline", 27803.9, 92.1544),
    "mi325x": ("mlperf51_AMD_8xMI325X_2xEPYC_9575F_1_llama2-70b-99_Offline", 34520.4, 114.7),
}


def clock_cap_of(key: str, system: str, scenario: str, on: bool | None = None) -> tuple[float, float] | None:
    """(dense, light) compute clock ratios of MLPerf result ``key`` on catalog ``system`` in ``scenario``
    (Chip.clock_cap): cap / :data:`GFX942_DENSE_CALIBRATION_MHZ` and cap / :data:`GFX942_BOOST_MHZ` for an AMD-harness
    Llama-2-70B row of :data:`CLOCK_CAPS`; None for every other row, or with the switch (``on``, default
    :data:`MLPERF_AMD_CLOCK_CAP_ON`, read at call time) off.

    >>> k = "mlperf51_AMD_8xMI300X_2xEPYC_9575F_llama2-70b-99_Offline"
    >>> tuple(round(x, 4) for x in clock_cap_of(k, "mi300x", "Offline", on=True))  # 1,400 / 1,649, 1,400 / 2,100
    (0.849, 0.6667)
    >>> clock_cap_of("mlperf51_AMD_8xMI355X_2xEPYC_9575F_llama2-70b-99_Offline", "mi355x", "Offline", on=True) is None
    True
    """
    if not (MLPERF_AMD_CLOCK_CAP_ON if on is None else on):
        return None
    parts = key.split("_")
    if len(parts) < 2 or parts[1] not in CAPPED_SUBMITTERS or "llama2-70b" not in key:
        return None
    cap = CLOCK_CAPS.get((system, scenario))
    if cap is None:
        return None
    return min(cap, power_held_mhz(system)) / GFX942_DENSE_CALIBRATION_MHZ, cap / GFX942_BOOST_MHZ


def power_held_mhz(system: str) -> float:
    """The clock (MHz) ``system``'s board power holds its dense ops at under the Llama-2-70B FP8 load: its Offline cap
    (named assumption: the Offline run, the scenario at the heaviest sustained load, is capped at the highest clock its
    board holds within its power, so that the cap binds and the run is deterministic; round 53's reading of AMD's
    1,400 MHz, 700 MHz below MI300X's boost). A higher cap (MI300X Interactive 2,000 MHz) does not lift the dense ops
    above it.

    Raises:
        KeyError: a chip without an Offline cap.
    """
    return CLOCK_CAPS[(system, "Offline")]
