"""Routed-expert blocks priced by the measured kernels of the engine's named MoE backend.

A serving engine runs its MoE layers through the kernel path its launch config names
(TensorRT-LLM ``moe_config.backend``: ``CUTLASS``, ``TRTLLM`` (TRT-LLM-gen), ``CUTEDSL``, ...; not
autotuned). The calibrated efficiency set prices the *fastest* measured path per shape
(fit/kernels.moe_rows). Where the system has measured latencies of the named backend at the
model's exact routed-expert shape (hidden h, intermediate I per expert-TP rank, experts E, top-k,
expert parallelism ep; data/moe_backends.toml, written by scripts/fit_moe_backends.py from
aiconfigurator's ``moe_perf`` tables), :class:`MeasuredMoePricer` prices the op as that
measurement:

    load  = FLOP / (count · 6 · h · I)                    token-expert assignments of the busiest rank
    u     = load / rows                                   experts it touches (the op table's routing)
    c(x)  = interpolation, log-log in x, of the measured per-layer latency, each measured row at
            its balanced load num_tokens · k / ep (cost/moe.busiest_rank_assignments, no tail: the
            table's routing is exactly balanced); beyond the last row linear in x from the last two
            rows, below the first row the first row's latency
    s     = max(0, c(min(load, n)) − c(u))                n = E / ep experts on the rank
    t_meas = max(c(load) − s, min(c(u), c(load)))
    r     = count · t_meas / t_roofline                   every time of the op (compute, memory,
                                                           launches) scaled by r

Reading the curve by touched experts. The collector's balanced routing sends token i to experts
(i·⌈E/k⌉/T + j·⌈E/k⌉) mod E, j < k (aiconfigurator collector ``balanced_logits``), so a measured row
of load x ≤ n touches x distinct experts of the rank, one row each: on that part of the curve c(x)
is the latency of reading x experts' weights. Real routing at the same load touches fewer (uniform
top-k: E·(1 − (1 − k/E)^T), cost/moe.py; more rows per expert, which the grouped GEMMs' row tiles
absorb at decode sizes), so the op is priced as the balanced reading c(load) less the weight reads of
the experts it leaves untouched, s: the balanced row touching min(load, n) experts against the one
touching u. At load ≤ n this is c(u), the balanced row touching as many experts; at u = min(load, n)
it is c(load), the balanced reading; at large loads u → n and s → 0. Never above c(load) (the
measured curves are not monotone everywhere: DeepSeek-R1's CUTLASS EP8 row of 32 tokens is slower
than that of 512). Worked number (B200, gpt-oss-120b, TensorRT-LLM-gen W4A8 MXFP4, EP1, 1.3.0rc20): 32
decoding tokens put 128 assignments on 128 experts; balanced routing touches all 128 (0.273 ms per
layer), uniform routing 128·(1 − (1 − 4/128)^32) = 81.6, priced as the balanced row of 81.6
assignments (20.4 tokens), about 0.18 ms.

Expert TP read as expert parallelism. A layout whose experts are split by tensor parallelism t
(``moe_tp``) is priced by its own measured expert-TP curve where one is shipped in the op's kernel format
(vLLM's ``flashinfer_trtllm`` curves, fit/vllm_moe_curves.VLLM_MOE_TP: at decode sizes a TP-t rank is up to 1.2x
slower than the EP-t row at the same weight bytes). Where none is in that format (gpt-oss-120b at TP2-TP8 on
TensorRT-LLM and vLLM, MoE TP = attention TP: no row in TensorRT-LLM's table at its shape; MiniMax-M2.5's FP8
experts at vLLM TP8, measured there in NVFP4 only), it is read from the EP row of t·ep ranks, the load and the touched
experts counted in whole experts of that row (a rank of expert TP t holds 1/t of every expert, a rank of
EP t every t-th expert whole: the same weight bytes and grouped-GEMM rows per rank). Measured support:
vLLM's table of the same TRT-LLM-gen MXFP4 kernel family (aiconfigurator-core 0.12.0, b200_sxm vllm
0.24.0 moe_perf, W4A16, balanced) has both: TP2/EP2 and TP4/EP4 agree within 4% at 8-256 tokens, TP8 is
up to 21% slower than EP8 (its 360-wide slices), so for TP8 the reading is a lower bound.
(tests/unit/test_moe_backend.py gives the rows.)

The op's bound attribution keeps the roofline's split. The measurement is of the catalog chip: a
variant whose chip differs (``--set chip.*``, a variant file) keeps the measured-to-roofline ratio
of its root chip and applies it to its own roofline, r = count · t_meas / t_roofline(root chip),
so that a what-if on bandwidth or FLOPS moves these ops as it moves every other one (the
variant's efficiency set prices both rooflines, so only the chip change shows) (as the table-lookup pricer does,
cost/table_pricer.py). Every other op, and every collective, is the wrapped pricer's. Worked
number (B200, DeepSeek-R1 NVFP4, EP8, TRT-LLM 1.3.0rc20): 512 tokens of the EP group put 512 · 8 /
8 = 512 assignments on each rank; CUTLASS measures 0.287 ms per layer there, TRT-LLM-gen 0.212 ms,
the calibrated roofline (fastest path, fitted on other shapes) 0.153 ms.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from jalapeno.cost.optable import MOE_KERNELS, CollectiveTable, OpTable
from jalapeno.cost.roofline import OpTimes
from jalapeno.specs.efficiency import MOE_W4A16_KEY


@dataclass(frozen=True, slots=True)
class MoeCurve:
    """Measured per-layer latency of one routed-expert shape against the busiest rank's load.

    Attributes:
        h, inter: hidden size and intermediate size per expert-TP rank (the op's ``kn``).
        fmt: compute format of the measured kernel (``fp4``; for MXFP4 experts ``fp8``, W4A8 MXFP4 x MXFP8 on
            Blackwell, or ``bf16``, W4A16 on Hopper); a curve without ``weights`` prices ops of this format.
        load: (n,) ascending token-expert assignments per rank.
        time_s: (n,) measured latency of one layer's routed-expert block, s.
        label: where it comes from (system, backend, table), for records.
        weights: the experts' stored format where it names kernels of its own (``mxfp4``:
            cost/optable.MOE_WEIGHT_KEYS, the op's ``key``): the curve prices the ops keyed so, whatever
            their compute format; "" otherwise (NVFP4 curves).
        experts_on_rank: routed experts each expert-parallel rank holds (E / ep), n of the module
            docstring; 0: unknown, the curve is read at the load alone (:meth:`routed`).
        width_split: the expert TP t of an op priced from the EP-(t·ep) row (module docstring): the op's
            load and touched experts (in slices of inter = I/t) are divided by t; 1: the curve's own layout.
    """

    h: float
    inter: float
    fmt: str
    load: np.ndarray
    time_s: np.ndarray
    label: str = ""
    weights: str = ""
    experts_on_rank: float = 0.0
    width_split: int = 1

    def __call__(self, load) -> np.ndarray:
        """Interpolated latency (s) at ``load`` (array); see the module docstring."""
        x = np.log(np.maximum(np.asarray(load, dtype=float), 1e-12))
        lx, ly = np.log(self.load), np.log(self.time_s)
        t = np.exp(np.interp(x, lx, ly))
        if len(self.load) >= 2:
            slope = (self.time_s[-1] - self.time_s[-2]) / (self.load[-1] - self.load[-2])
            beyond = np.asarray(load, dtype=float) > self.load[-1]
            t = np.where(beyond, self.time_s[-1] + max(slope, 0.0) * (np.asarray(load, dtype=float) - self.load[-1]), t)
        return t

    def routed(self, load, touched) -> np.ndarray:
        """Latency (s) of a rank with ``load`` assignments on ``touched`` distinct experts (arrays):
        max(c(load) − s, min(c(u), c(load))), s = max(0, c(min(load, n)) − c(u)), u = min(touched, load, n)
        (module docstring); c(load) where :attr:`experts_on_rank` is unknown (0).

        >>> c = MoeCurve(1.0, 1.0, "fp4", np.array([1.0, 100.0]), np.array([1e-5, 1e-3]), experts_on_rank=100.0)
        >>> round(float(c.routed(np.array([100.0]), np.array([10.0]))[0]) * 1e6, 6)  # c(10): log-log midpoint
        100.0
        """
        load = np.asarray(load, dtype=float)
        n = self.experts_on_rank
        if n <= 0:
            return self(load)
        u = np.minimum(np.minimum(np.asarray(touched, dtype=float), load), n)
        full, few = self(load), self(u)
        saving = np.maximum(self(np.minimum(load, n)) - few, 0.0)
        return np.maximum(full - saving, np.minimum(few, full))


class _WrapsPricer:
    """What a MoE-backend pricer passes through to the pricer it wraps (``self.inner``): the
    system, its efficiency set and name, and every collective."""

    __slots__ = ()

    @property
    def system(self):
        return self.inner.system

    @property
    def efficiency(self):
        return self.inner.efficiency

    @property
    def name(self) -> str:
        return self.inner.system.name

    def collective_times(self, colls: CollectiveTable):
        return self.inner.collective_times(colls)

    def collective(self, kind: str, group: int, message_bytes, placement: str = "packed"):
        return self.inner.collective(kind, group, message_bytes, placement)


@dataclass(frozen=True, slots=True)
class MeasuredMoePricer(_WrapsPricer):
    """A pricer whose routed-expert ops of one shape are priced by a measured :class:`MoeCurve`.

    Attributes:
        inner: the wrapped pricer (every other op, every collective, the efficiency set).
        curve: the backend's measured curve at the model's shape on this layout.
        backend: the engine MoE backend's name (``cutlass``, ``trtllm``), for records.
        reference: for a variant whose chip differs from the measured (root) chip, the same pricer
            on the root's chip; the measurement scales by the variant's roofline over its roofline.
            None: the measured chip itself.
        pool_key: what cost/pool_backends.with_pool_backends applied when this is the outermost wrapper it returned
            (cost/pool_backends.pool_backends_key); None: not tagged.
    """

    inner: object
    curve: MoeCurve
    backend: str
    reference: object = None
    pool_key: tuple | None = None

    def op_times(self, ops: OpTable) -> OpTimes:
        """The inner pricer's op times (seconds, (n_ops, N)) with the MoE ops scaled by the measured backend curve."""
        base = self.inner.op_times(ops)
        ref = base if self.reference is None else self.reference.op_times(ops)
        c = self.curve
        scale = np.ones_like(base.time_s)
        hit = False
        for i, (kind, fmt, key) in enumerate(zip(ops.kind, ops.fmt, ops.keys)):
            # a curve of MXFP4 experts is the backend's own kernel whatever compute format the precision asks
            # for (Hopper's TRITON runs W4A16); others price ops of their format (an op's key is its compute
            # format unless its experts' stored format names other kernels, cost/optable.MOE_WEIGHT_KEYS)
            mine = key == c.weights if c.weights else (fmt == c.fmt and key == fmt)
            if (
                kind != "moe"
                or not mine
                or not ops.kn
                or tuple(float(v) for v in np.ravel(ops.kn[i])[:2]) != (c.h, c.inter)
            ):
                continue
            count = np.asarray(ops.kernels[i], dtype=float) / MOE_KERNELS
            load = ops.flop[i] / np.maximum(count * 6.0 * c.h * c.inter, 1e-30)
            touched = np.broadcast_to(load / np.maximum(np.asarray(ops.rows[i], dtype=float), 1e-30), load.shape)
            load, touched = load / c.width_split, touched / c.width_split  # in whole experts of the curve's rank
            ok = (load > 0) & (base.time_s[i] > 0) & (ref.time_s[i] > 0)
            scale[i, ok] = np.broadcast_to(count, load.shape)[ok] * c.routed(load[ok], touched[ok]) / ref.time_s[i, ok]
            hit = True
        if not hit:
            return base
        net = None if base.network_s is None else base.network_s * scale
        return OpTimes(base.compute_s * scale, base.memory_s * scale, base.overhead_s * scale, base.time_s * scale, net)

    def curves(self) -> dict[tuple[str, str], MoeCurve]:
        """{(compute format, stored weight format): curve} of this pricer and the measured-MoE pricers it wraps
        (cost/pool_backends.with_moe_backend wraps one per kernel format of a backend: vLLM's ``flashinfer_trtllm``
        runs FP8 and NVFP4 experts)."""
        out, p = {}, self
        while isinstance(p, MeasuredMoePricer):
            out.setdefault((p.curve.fmt, p.curve.weights), p.curve)
            p = p.inner
        return out

    def with_efficiency(self, efficiency):
        """This pricer with another efficiency set on the inner and reference pricers."""
        ref = None if self.reference is None else self.reference.with_efficiency(efficiency)
        return replace(self, inner=self.inner.with_efficiency(efficiency), reference=ref)


@dataclass(frozen=True, slots=True)
class KernelMoePricer(_WrapsPricer):
    """A pricer whose routed-expert ops run an engine backend's kernel, priced by its fitted form.

    For a backend measured on the system but not at the served model's shape (vLLM's Marlin MoE on
    H100: data/moe_backend_kernels.toml, fit/moe_backends.fit_backend_kernels): every op of kind
    ``moe`` is priced by the wrapped pricer's roofline at the kernel's compute format ``fmt`` (Marlin:
    BF16 tensor-core math on MXFP4 weights dequantised in registers, whatever compute format the
    precision asks for) with the backend's ``moe[fmt]`` form (peak_fraction, half_rows, hbm_fraction)
    in place of the set's, so the fitted numbers mean what the fit did with them (fit/kernels.fit_moe);
    where the backend's fit is marked ``floor_applied`` (fit/moe_backends.FLOOR_APPLIED: TensorRT-LLM's
    Triton MoE on H200, 59 µs per layer) its fitted per-layer floor ``floor_s`` replaces the MoE kernels'
    launches as ``moe_floor_s`` does (cost/roofline.py), otherwise no floor (the NVIDIA sets' rule). The
    op's weight and activation bytes stay as the op table built them (the MXFP4 weights; the activation traffic of the precision's compute format: at gpt-oss-120b's
    decode a few MB against ~0.85 GB of weights per layer at TP2). Every other op and every collective
    is the wrapped pricer's. A variant's chip moves these ops through the same roofline.

    Attributes:
        inner: the wrapped pricer.
        fmt: the kernel's compute format.
        peak_fraction, half_rows, hbm_fraction: the backend's fitted form.
        backend: the backend's name; label: where the form comes from (system, backend, table).
        floor_s: the fitted per-layer floor, s, priced in place of the MoE kernels' launches; None: none.
        width: (c elements, exponent p) of the backend's fitted width term (fit/moe_backend_width.py): an op split
            over expert TP k > 1 has its compute time multiplied by cost/moe_width.width_factor (per-rank width
            ``kn[1]``, its rows per expert, ``half_rows``); None: no width term (a backend measured at one expert TP).
            Set, it replaces the inner set's own width term (``Efficiency.moe_width_term``, data/moe_width.toml,
            fitted on TensorRT-LLM's kernels) on the MoE ops: one width term, not both.
        pool_key: what cost/pool_backends.with_pool_backends applied when this is the outermost wrapper it returned
            (cost/pool_backends.pool_backends_key); None: not tagged.
    """

    inner: object
    fmt: str
    peak_fraction: float
    half_rows: float
    hbm_fraction: float
    backend: str
    label: str = ""
    floor_s: float | None = None
    width: tuple[float, float] | None = None
    pool_key: tuple | None = None

    def op_times(self, ops: OpTable) -> OpTimes:
        """The inner pricer's op times (seconds, (n_ops, N)) with the MoE ops priced at the backend kernel's own efficiency."""
        base = self.inner.op_times(ops)
        moe = np.array([k == "moe" for k in ops.kind]).reshape(-1, 1)
        if not moe.any():
            return base
        eff = self.inner.efficiency.with_kernel(
            "moe", self.fmt, peak_fraction=self.peak_fraction, half_rows=self.half_rows, hbm_fraction=self.hbm_fraction
        )
        if MOE_W4A16_KEY in eff.moe:  # W4A16 ops keyed to the set's own entry (specs/w4a16_moe.py): this backend's form
            eff = eff.with_kernel(
                "moe",
                MOE_W4A16_KEY,
                peak_fraction=self.peak_fraction,
                half_rows=self.half_rows,
                hbm_fraction=self.hbm_fraction,
                floor_s=self.floor_s,
            )
        if self.floor_s is not None:
            eff = replace(eff, moe_floor_s=self.floor_s)
        if self.width is not None:  # the backend's own width term replaces the stack's (TensorRT-LLM's kernels')
            eff = replace(eff, moe_width_term=False)
        ops_k = replace(ops, fmt=tuple(self.fmt if k == "moe" else f for k, f in zip(ops.kind, ops.fmt)))
        k = self.inner.with_efficiency(eff).op_times(ops_k)
        if self.width is not None and ops.split and ops.kn:
            k = self._with_width(ops, k)
        net = None if base.network_s is None else np.where(moe, k.network, base.network_s)
        return OpTimes(
            *(
                np.where(moe, b, a)
                for a, b in (
                    (base.compute_s, k.compute_s),
                    (base.memory_s, k.memory_s),
                    (base.overhead_s, k.overhead_s),
                    (base.time_s, k.time_s),
                )
            ),
            net,
        )

    def _with_width(self, ops: OpTable, k: OpTimes) -> OpTimes:
        """``k`` with the compute time of every ``moe`` op split over expert TP > 1 multiplied by the width term
        (:attr:`width`), recombined by the roofline rule."""
        from jalapeno.cost.moe_width import width_factor

        compute = k.compute_s.copy()
        for i, (kind, split) in enumerate(zip(ops.kind, ops.split)):
            if kind == "moe" and split > 1:
                rows = np.maximum(np.asarray(ops.rows[i], dtype=float), 1e-9)
                compute[i] = compute[i] * width_factor(
                    np.asarray(ops.kn[i][1], dtype=float), split, rows, self.half_rows, *self.width
                )
        return OpTimes.combine(compute, k.memory_s, k.overhead_s, k.network_s)

    def with_efficiency(self, efficiency):
        """This pricer over the inner one with another efficiency set."""
        return replace(self, inner=self.inner.with_efficiency(efficiency))
