"""Benchmark: the default ``jalapeno compare`` (DeepSeek-R1 8k1k, 4 systems), ``compare -c 64`` and (``--long``) ``-w 128k1k``.

Goals (issue: main job): sweep <= 1 s, whole command <= 3 s wall including start-up (<= 2.5 s
for a margin, issue 15), peak memory <= 1 GB. Prints the sweep time, points evaluated per second,
the command's wall and CPU time and its peak RSS (from a child process, so start-up and imports
are included). The fixed-concurrency sweep (``compare -c 64``: every aggregated deployment's fixed
point, 9 passes each, serve/lockstep.py) has the same 3 s goal (round 25, speedc25): 6.4 s before round 25,
4.5 s after it under load. Round 26 (speedc26: every layout's deployments in one lockstep, the pass's
collectives priced together, per-call memos) measured 4.4 -> 3.6 s on a loaded machine, but on a quiet one the
commit before it and after it both take 3.6-3.8 s (best of 3, interleaved): the gain is within noise; the
final main of round 26 runs 3.4-3.7 s. Not met: the rest is about 2,300
step builds (cost/ops.build_step_ops, ~0.25 ms each) and 3,900 step and point assemblies (~0.3 ms each),
one per layout or deployment and pass, whose cost is NumPy's per-call overhead on arrays of a dozen
columns; sharing them across layouts needs a step_cost whose layout varies by column (per-column TP, DP,
EP and PP in the op table and the step assembly), which round 26 did not build. Round 27 (speedc27) sized the
step memos for a lockstep pass (Batch.distinct, the step's layout checks and the memory fit's weight bytes kept
4-8 entries and missed every call with ~55 deployments interleaved per pass), dropped the priced memo's oldest
entries in O(1) and trimmed per-call NumPy dispatch: 4.02 -> 3.89 s wall, CPU 3.97 -> 3.85 s (best of 5,
interleaved, load 1.7-1.9 on 2 cores); plain ``compare`` unchanged (1.9 s). Still not met: the same ~2,300
builds and ~3,900 step assemblies remain. Round 28 (speed28) trimmed that per-step path without changing a
byte: a pass hands each step its priced tables by batch identity (no batch keys, no memo: the cross-pass memo
never hit), collective-row masks kept per row layout (cost/step_rows.py), sharding and window memos, scalar
factors multiplied before filling op rows, the serial-k floors and the two-batch step in one go: CPU 3.64 ->
3.17 s, wall 3.68 -> 3.33 s (best of 5, interleaved, load 3.4-4.5 on 2 cores; -13% CPU, the 17 compare/frontier
reference cases -17%); plain ``compare`` 1.75 -> 1.64 s CPU. Still not met on a loaded machine (a quiet one
should show about 3.0-3.1 s): the ~2,300 builds (about a quarter of the run) need the per-column layout.
Round 29 (compare29) profiled ``compare -c 64`` again and cut nothing: 8 sweeps (4 systems x 2 precisions) x 9
passes price 59-72 deployments on 34-42 layouts a pass (few reach their bitwise fixed point before pass 6;
pass 8 prices 0-16), and the time splits, timed per call without a profiler (load 6 on 2 cores, 12.3 s): one
build per layout and pass (cost/priced._build, 2,323 calls, 1.4 ms) 27%, its op table alone
(cost/ops.build_step_ops) 20%, the step assemblies (cost/step.step_cost, 3,900 calls, 0.86 ms) 27%,
analytic.agg_plan 9%; every one of them is already memoised across the calls that repeat it and trimmed
of per-call NumPy dispatch (rounds 25-28), and no second build of one batch is left. The cut left is the
per-column layout (one build per pass for every layout: dp, tp, cp, ep, eplb, dp_dispatch, the MoE TP and
the sharding's layer share and experts per rank as (N,) columns, and rows that exist only on some layouts
(an all-reduce only where TP > 1, an all-to-all only with EP) padded so that every layout's tables sum in
the same row order: a step time's last bits depend on it), too large for the round. Its default
``compare`` (three iso-interactivity columns, was four) and ``compare -c 64`` against the round's start
(180dec6), interleaved 3x: CPU best 1.71 -> 1.66 s and 3.28 -> 3.16 s (noise: the sweep is unchanged).
Round 30 (perf30) built the per-column layout for the layouts that give the op table the same rows
(cost/layout_columns.py: the same attention TP, MoE TP and exchange, attention DP > 1, one stage, no CP,
balanced dispatch; attention DP, EP, EPLB slots and the stage's chips vary by column, each per-column number
worked out per layout as a build of its own does, so every element is the same IEEE operation: outputs
byte-identical). ``compare -c 64`` builds 883 op tables (259 of them joint) where it built 2,322, the
other cost being unchanged (the ~3,900 step assemblies and points, analytic.agg_points/step.step_cost, now
the larger half); Batch.distinct answers a batch of two points or fewer without its look-up. Against main
32b260e (interleaved, load 8-9 on 2 cores all evening: wall times not meaningful, CPU best): ``compare -c 64``
CPU 3.25 -> 2.89 s (-11%, best of 5); ``compare -c 1,4,16,64,256`` 5.37 -> 4.71 s; ``frontier -s gb200-nvl72
-c 1,8,64`` 1.14 -> 1.01 s; plain ``compare`` unchanged (2.01 / 1.99 s: its batch-grid sweep prices each
deployment in its own call). On the quiet machine at the round's start (load 0.6) main took 2.98 s wall,
3.0 s CPU: about 2.65 s expected now (an estimate from the CPU ratio, not measured quiet; 2.5 s margin not yet
met). Measured quiet at the round's close (load 1.0, best of 3, interleaved twice with a959866, the round's
start): ``compare -c 64`` 2.64 / 2.65 -> 2.36 / 2.36 s wall (2.74 -> 2.46 s CPU; the 2.5 s margin met); plain
``compare`` 1.37 -> 1.41 / 1.43 s and the in-process sweep 0.409 -> 0.426 s (+3-4%: the round's other changes,
e.g. packed collectives also pricing the spread candidates, coll30); peak RSS 140-144 MB. Peak RSS of ``compare -c 64`` 70 -> 72 MB (``-w 128k1k -c 64``: 203 -> 240 MB). Tried and
left out: the batch-grid sweep priced through the same pass (every layout's grid planned, priced together,
finished): byte-identical and -5% CPU on plain ``compare``, but it holds every layout's grid tables at once:
peak RSS 109 -> 174 MB, and 586 MB -> 1.14 GB (over the 1 GB goal) and +12% CPU at ``-w 128k1k``.
Round 34 (perf34) profiled ``compare``, ``compare -c 64`` and ``compare -w 128k1k`` (cProfile, line_profiler, ``-X
importtime``). ``-w 128k1k`` spent its time in the batch-grid sweep, where step_cost indexed every (rows, N) op,
op-time and collective array from a batch's distinct points to all its points (np.take, 10,119 calls) though most
callers read none of them: they are now cut when first read (cost/lazy_cut.py; 1,058 takes left); and
Batch.distinct's first_seen (4.2 M rows in 726 calls) groups rows by a 64-bit hash of their bits, checked row by
row, where np.unique sorted them as byte strings (2x at 1,000 rows, 4x at 15,000-60,000). Outputs byte-identical
(``compare --json`` default, ``-c 64``, ``-w 128k1k``, their text and HTML, ``validate -o``). Against main 9a5b301,
this script (``--long``) run twice interleaved per tree, twice over (load 1.8-3.2 on 2 cores; CPU best): ``-w
128k1k`` CPU 10.53 / 10.94 -> 8.27 / 8.59 s and 10.68 / 11.07 -> 8.94 / 9.09 s (-17 to -21%; the first pass had the
lazy cut and the stable-sort hash, the second the final tree), peak RSS 568-582 -> 525-531 MB; ``-c 64`` CPU 4.77 /
4.77 -> 4.51 / 4.61 s, then 5.04 / 5.05 -> 5.25 / 5.07 s: unchanged within the noise (its batches are 2 + K' rows:
the copies and sorts were small); plain ``compare`` 2.91-3.11 -> 2.94-3.13 s CPU and the in-process sweep about 1.0
s both before and after (unchanged). ``-c 64`` still misses 3 s: a line profile of its sweep (8 sweeps x 9 passes,
3,900 deployment-passes) puts about half in the per-deployment finish (analytic.agg_points: its step_cost ~65%,
two-batch overlap (cost/step._two_batch, 1,627 calls) 29% of that, the memory fit 14%), a third in pricing the pass
(priced.price_layouts: 633 single and 261 joint builds, collectives together) and 15% in planning
(analytic.agg_plan: the long-prompt chunk batch (_long_chunks) 32% of it, the padded step batch's Batch.make 22%,
Batch.joined 18%); every part is a few dozen NumPy calls on arrays of 1-20 columns, already memoised and trimmed by
rounds 25-30, so no one call is worth cutting. Imports take 0.65 s of the command (every CLI command module is
imported to register it). The cut left: the per-deployment finish vectorised across the deployments of a pass (the
step assembly, overlap and memory fit on (rows, deployments) tables, as round 30 did for the op builds), or the 8
system x precision sweeps in worker processes (they are independent; byte-identical by construction), neither done
here. Round 35 (perf35) took the second: ``compare_systems`` hands every system x precision sweep (8 for the default
4 systems x 2 precisions; analysis/deployed.sweep_plan) to forked worker processes (analysis/workers.py: one per
usable CPU, at most one per sweep; ``JALAPENO_WORKERS=N``, ``=1`` one process; only on Linux with no other Python
thread; gc.freeze() before the fork, which cut the workers' CPU 4.09-4.42 -> 3.69-3.88 s; a killed worker's sweeps
run in the parent; Ctrl-C ends the workers at once). Splitting a system's fp8 and fp4 sweeps costs nothing (gb300
-c 64: 0.89-0.98 s CPU together, 0.41-0.53 s apart), and in one process (JALAPENO_WORKERS=1) the run makes the same
calls as before (cProfile: 3,900 agg_points, 894 build_step_ops, 80 price_layouts; 5.49 M calls, +2,000
bookkeeping). Outputs byte-identical (``compare --json`` default, ``-c 64``, ``-w 128k1k``, ``-c 64``'s text,
stderr and HTML but for plotly's random div ids, ``validate -o`` all rows, ``--held-out``, ``--mlperf``, the golden
tests). Against main 69a83e5, this script run interleaved twice on the 2-core machine, final tree, quiet at the start
(load 0.6-1.8; CPU is user + sys of the command and its workers, best of 3): ``compare -c 64`` wall 3.32 / 3.62 ->
2.10 / 2.09 s (goal <= 3 s and the 2.5 s margin met), CPU 3.42 / 3.60 -> 3.50 / 3.47 s; ``compare`` 2.14 / 2.14 ->
1.65 / 1.57 s wall (CPU 2.23 / 2.24 -> 2.44 / 2.38 s); the in-process sweep 0.66 / 0.70 -> 0.52 / 0.87 s; ``-w
128k1k`` (best of 2, load 2.1) 6.97 -> 4.55 s wall, CPU 6.92 -> 7.66 s. On a machine with no free core the workers
gain little and cost 3-5% CPU (``-c 64`` with JALAPENO_WORKERS 1 vs 2, interleaved, load 2.2: CPU 3.88-4.00 vs
3.99-4.14 s, wall 4.00-4.09 vs 3.81-4.02 s; main and this tree at load 1.9-2.3: best 3.59 vs 3.68 s wall). Peak RSS per
process falls (141-145 -> 113-114 MB; ``-w 128k1k`` 513 -> 488 MB), but the memory of all the processes together
rises with the workers: total PSS, sampled every 50 ms, of ``-w 128k1k`` 513-514 -> 894-929 MB with 2 workers (each
holds one sweep's tables, about 0.45 GB), of ``-c 64`` 58 -> 91 MB; more CPUs, more workers: ``JALAPENO_WORKERS``
caps them. The per-deployment finish vectorised across a pass's deployments remains the cut for
one core.
Round 37 (speed37) profiled ``-w 128k1k`` in one process (JALAPENO_WORKERS=1; cProfile, line_profiler on the
step calls of more than 2,000 points): 108 of its 770 step calls priced 5,000 points or more (7,182-28,644: a
DP64-DP128 layout's 2N step kinds beside the N·K' chunk steps of its prompts longer than one rank's budget, a
256-token budget giving about 480 distinct chunks a batch) and took two thirds of the step time; each was priced
twice, serially and under two-batch overlap, each time with the overlap's half batches beside it, though which
variant the sweep keeps at a batch depends on its decode step alone and the chunk steps enter only TTFT and the
concurrency. Cut, byte for byte the same numbers: serve/overlap_pick.py prices both variants' step kinds
(analytic.agg_head), keeps the faster at each batch, then prices the chunk steps for the kept variant only
(analytic.agg_tail; from 1,024 chunk steps a layout, SPLIT_MIN_CHUNK_STEPS, else joined as before), reading
their step time and interval alone (cost/step.step_times: no bounds, attribution or memory fit); a serial step
prices no overlap halves (an overlap step on the same batch adds them, alone, from the memo; a lockstep pass
prices them for its overlap deployments' batches only); roofline.op_times takes the serial-k maximum only on the
ops that have the term. Outputs byte-identical (``compare --json`` default, ``-c 64``, ``-w 128k1k``, their text
and stderr, ``validate -o`` all rows, ``--held-out``, ``--mlperf``; tests/unit/test_overlap_pick.py). Against
main ac17599, this script (``--long``) run interleaved twice per tree on the shared 2-core machine (load 4.4-5.2
all along: the workers seldom had two free cores, so wall is close to CPU; CPU best of 3, 2 for ``-w``):
``-w 128k1k`` wall 14.38 / 9.93 -> 6.09 / 6.19 s, CPU 9.54 / 9.78 -> 5.95 / 6.08 s (-38%), peak RSS per process
486-499 -> 187-189 MB; ``compare -c 64`` wall 7.40 / 4.95 -> 5.82 / 5.33 s, CPU 5.02 / 4.87 -> 4.73 / 5.16 s and
plain ``compare`` wall 5.16 / 2.92 -> 4.40 / 2.96 s, CPU 3.41 / 2.88 -> 2.95 / 2.91 s: unchanged within the noise.
In one process, interleaved three or four times (load 2.1-3.8; CPU after imports, min-max): ``-w 128k1k`` 8.44-9.38
-> 4.90-5.24 s, plain ``compare`` 2.38-2.49 -> 2.20-2.30 s, ``-c 64`` 4.26-4.89 -> 3.98-4.53 s. Goals: ``-w 128k1k``
<= 5 s wall is not met at load 5 (6.1 s); with two free cores it should be about 0.7 s of imports + 5.0 / 2 s
(an estimate, not measured quiet); ``-c 64`` <= 3 s was met quiet in round 35 (2.1 s) and is not met under this
load. Left: the ~27,000 disaggregated deployments the sweep makes (analysis/sweep.py, 26,645 Deployment
validations, ~0.3 s a run) and the 6,721 KV hand-off prices (serve/disagg.kv_transfer_s: one send/recv group a
pool size), the step kinds' own builds (half of what ``-w 128k1k`` prices now) and the ~0.65 s of imports.
Round 39 (perf39) profiled the parent process (cProfile with a CPU timer; the workers' 8 sweeps take 0.42-0.51 s CPU
each at ``-c 64`` and are balanced). Three serial costs of the parent cut, outputs byte-identical (``compare --json``
default and ``-c 64``, ``compare``'s text, stderr and HTML but for plotly's div ids, ``validate -o`` all rows): typer
built the app's click command (every command's parameters from its signature, ~17 ms) three times a run, now once
(cli/app._click_app); the sweeps' ~22,600 Deployment / Pool / Layout objects came back through dataclasses'
__getstate__/__setstate__, which call ``fields()`` per object each way, now by their field values
(analysis/workers._Reducers); the six tier lines of the chart are plotly shapes added directly, not through add_vline
(report/html._vline, the same page JSON). Parent CPU, in-process runs interleaved with main 8bd5016 (load 4.3-7.6 on 2
cores, best of 3-4): plain ``compare`` 0.823 -> 0.705 s, ``-c 64`` 0.653 -> 0.597 s; the in-process sweep (fp8, 4 sweeps)
parent 0.046-0.049 -> 0.038-0.041 s, its workers 0.94-1.08 -> 0.90-0.99 s. This script, interleaved twice per tree
(load 5.9-8.1, another test run beside it): ``compare`` CPU 2.78 / 2.88 -> 3.07 / 2.65 s, ``-c 64`` 4.61 / 5.00 -> 4.87 /
4.50 s, walls 5-15 s: the whole command's CPU is within that noise (the parent is a sixth of it). Wall times at that
load say nothing; on a quiet machine ``-c 64`` should be about 0.6 s + 3.8 s / 2 = 2.5 s (an estimate). Left: the parent's
imports (~0.31 s CPU: numpy, pydantic's system schema, typer and rich, every CLI module, all needed by ``compare``
itself: importing only its module saves nothing) and the chart (plotly's first-use imports ~0.1 s, the page 0.05 s),
which could overlap the workers; the workers' per-deployment finish (analytic.agg_points) as before.
Round 43 (robust43) profiled ``compare -c 64`` again: its 8 sweeps take 0.45-0.54 s CPU each (balanced; gc 0.03 s
of 4.5 s in one process), the parent 0.45 s before the fork (imports ~0.35 s: the other commands' modules add only
~15 ms) and ~0.25 s after it, 0.2 s of which is the chart: plotly's import (~0.08 s) and its first make_subplots,
which loads plotly's validator table (~0.08 s). That start-up now runs in the parent while the workers sweep, where
it only waited (analysis/workers.meanwhile, report/html.warm_chart; not run in one process): the serial tail's CPU
0.22-0.29 -> 0.12-0.15 s (three runs per tree, interleaved, load 12 on 2 cores). Outputs byte-identical (``compare
--json``, ``-c 64``'s text, stderr and HTML but for plotly's div id). This script at that load: wall 20-25 s both,
CPU 5.26-5.73 (main) vs 5.49-5.52 s: the same work moved, not cut. Expected on a quiet machine (an estimate, not
measured): about 0.08 s off the wall on 2 cores (the warm-up shares them with the workers), 0.15 s with a third
free core, i.e. 2.66 -> ~2.58 s; the 2.5 s margin still needs the workers' per-deployment finish vectorised.
Round 44 (perf44) profiled ``compare -c 64`` again (cProfile, line_profiler, py-spy sampling, ``-X importtime``; load 3-10
on the 2 shared cores all along). The parent: imports ~0.29 s CPU before the fork (numpy, pydantic with its 13
system-file models, typer and rich, and ~106 dataclass definitions, ~60 ms of it), then ~0.1 s of chart
(plotly's figure, its 4.9 MB page) and tables after the join; the 8 sweeps 0.43-0.49 s CPU each, balanced over the 2
workers. The sweeps' profile is flat (no function above 3% of its own: the per-deployment finish, NumPy calls on
arrays of a few columns), but one call was not trimmed: ``Batch.make`` ran every field through its full type,
shape and broadcast checks, 7,511 batches a run. It now takes plain inputs (numbers, C-contiguous 1-D float64
arrays of one length, all finite and >= 0) as they are and leaves anything else to the full read, which raises
as before (cost/batch._plain_fields; tests/unit/test_batch_plain_fields.py): 0.21 -> 0.13 s CPU in one process;
and the step's bound rows are built by ``np.array`` instead of ``np.stack`` (7,798 calls). Outputs
byte-identical (``compare`` and ``-c 64`` text, ``--json`` and HTML but for plotly's div id; ``-m llama-3.3-70b -s
gb200-nvl72,h200 -c 64 --json``, ``-m gpt-oss-120b -s b200,mi355x -c 64``, ``-m qwen3-235b-a22b -s gb300-nvl72,b200
--json``; ``validate -o`` all rows and ``--held-out`` byte for byte against main). Against main 9c120a7: the
in-process sweep (fp8 and fp4, 4 systems, ``-c 64``; JALAPENO_WORKERS=1) interleaved 3 x 2 runs at load 5.6-7.6:
CPU median 3.90 -> 3.72 s (-4.6%; best per process 3.82 / 3.99 / 3.55 -> 3.65 / 3.94 / 3.40 s). The whole command,
interleaved 6 times per tree at load 9.6-10.8 (nice 10): ``-c 64`` CPU median 5.16 -> 4.96 s (min 4.94 -> 4.63),
wall 29.3 vs 29.9 s (meaningless at that load), and again 5 times each at load 6.1-9.8: CPU median 5.05 -> 4.88 s (min 4.93 -> 4.81),
wall 18.7 vs 18.0 s; plain ``compare`` (5 each, load 9.2-10.9) CPU median 3.97 -> 3.73 s (min 3.03 -> 3.13: within the noise).
Expected quiet: about 0.06 s off the wall of ``-c 64`` (0.12 s of workers' CPU over 2 cores), i.e. 2.3-2.4 s at
the round's quiet figures; the 3 s goal on a loaded machine still needs the per-deployment finish vectorised
across a pass's deployments (rounds 34-43), or fewer imports in the parent (numpy, pydantic, typer, rich: the
CLI needs them all before it forks).
Round 45 (perf45) profiled ``compare -c 64`` in one process again (cProfile, ``-X importtime``, gc.callbacks):
the fixed-concurrency solve (serve/lockstep.py) finished every deployment in full at each of its 9 passes
(3,899 deployment-passes: the step's attribution, bounds, link level and memory fit, the two-batch overlap's
per-op parts, ServingPoints.assemble), though a pass before the last reads only each deployment's TTFT and
E2E (its next batch) and only 529 finished points are kept. Now those passes finish the times alone
(analytic.agg_head / agg_tail ``times_only``; cost/step.step_times skips the serial step's per-stage shares and
the TBO stage's attribution parts), and each deployment is finished in full once, at the pass that fixes it or
the last (tests/unit/test_lockstep_times.py). Also the CLI loads its commands with the garbage collector paused and
freezes what they made (cli/app._register): GC in the parent 0.08-0.09 -> 0.03 s, in one process 0.17-0.18 ->
0.06-0.07 s. Outputs byte-identical (``compare`` and ``-c 64`` text, stderr and ``--json``, ``-c 1,4,16,64,256``,
``-w 128k1k`` and its HTML but for plotly's div ids, ``frontier -s gb200-nvl72 -c 1,8,64``, the llama / gpt-oss /
qwen compares of round 44, ``validate -o`` all rows, ``--held-out`` and ``--mlperf`` against main's CSVs byte for
byte). Against main 1da4091 (both trees with fresh .pyc), interleaved, CPU user + sys of the command and its
workers, load 4.3-4.9 on the 2 shared cores: ``compare -c 64`` median 5.48 -> 4.10 s (min 5.24 -> 3.44, 6 runs
each; wall median 8.8 -> 7.0 s at that load), in one process (JALAPENO_WORKERS=1) median 6.01 -> 4.36 s (4 each);
plain ``compare`` 4.05 -> 3.76 s and ``-w 128k1k`` 6.87 -> 7.0 s (6 each; within the noise: the batch-grid sweep
was not the target); peak RSS of ``-c 64`` 107 MB both. Quiet, ``-c 64`` should take about 0.75 s in the parent +
2.9 s / 2 of sweeps, i.e. ~2.2 s wall (an estimate, not measured quiet). The 3 s goal at load 1.4 (4.29 s in the
round's brief) needs about a quarter less CPU. The sweep's profile after the change (cProfile, one process): each
pass's pricing 43% (lockstep._price_shared: the builds and collectives of priced.price_layouts, Batch.distinct),
the times-only finish 28%, planning 14% (analytic.agg_plan), the 529 full finishes 10%: NumPy calls on arrays of a
few columns per deployment; vectorising the finish across a pass's deployments remains the cut.
Round 46 (perf46) profiled ``compare -c 64`` in one process again (cProfile, line_profiler) and counted instructions
with valgrind's callgrind, which a loaded machine does not move (one sweep, deepseek-r1 8k1k fp8 on gb200-nvl72 at ``-c
64``, one process; 1,500.5 M of its instructions are imports and loading). ``-c 64`` is one concurrency: its 8 sweeps x
9 passes price 4,407 steps and no two are the same (keyed by pricer, layout, precision, overlap and the batch's bytes),
so a memo across concurrencies or deployments has nothing to find. The profile is flat; the two-batch overlap's stage
(cost/overlap.tbo_stage, 1,852 steps) was half of the times-only step. Four cuts, each its own commit: tbo_stage reads
tbo_layer's (N,) SM share as it is (np.broadcast_to's view cost 5x the rest of its line) and skips the stretched tables'
unread dense-layer sum; serve/chunked.long_chunks gives one point's chunk batch without np.tile's copy, np.take /
np.repeat by their methods; Batch._distinct fills its row table by column (np.stack: 2.5x); the step's and tbo_stage's
row sums take their rows by index (ndarray.take, a third faster than a boolean mask: the same rows in the same order,
cost/step_rows.op_stage_rows, CollRows.at). Callgrind, that sweep: 3,331.1 M instructions -> 3,312.1 / 3,293.7 / 3,283.0
/ 3,259.1 M after each cut (-2.2% of the run, -3.9% of its 1,830.6 M past the imports). Outputs byte-identical
(``compare --json`` and stderr of deepseek-r1, llama-3.3-70b, gpt-oss-120b and qwen3-235b-a22b, default and ``-c 64``;
``validate -o`` all rows, ``--held-out`` and ``--mlperf`` against main's CSVs). The whole command against main ffc6298,
interleaved 3 runs per tree (CPU user + sys of the command and its workers): ``-c 64`` at load 13-14 (the first three
cuts) CPU median 4.42 -> 3.92 s (min 3.90 -> 3.67), at load 8 (all four) 4.02 -> 3.82 s (min 3.78 -> 3.61; wall 18.0 ->
15.2 s, meaningless at that load); plain ``compare`` at load 10 CPU median 3.23 -> 2.95 s (min 3.20 -> 2.89); the
in-process sweep (fp8 and fp4, 4 systems, ``-c 64``; two processes of 3 runs per tree, interleaved, load 6.7-7.3) CPU
min 2.54 -> 2.44 s (-4%, as callgrind), median 2.82 -> 2.59 s. Quiet, ``-c 64`` should take ~0.05-0.1 s less wall than
before (an estimate: -4% of the sweeps' ~2.9 s CPU over 2 workers; not measured quiet); the 3 s goal at load still needs
the finish vectorised across a pass's deployments.
Round 52 (ttftwaves52): ``--spread`` times ``compare -c 64`` with serve/ttft_spread.STEADY_SPREAD_ON set (shipped off)
beside it off. The spread priced each of ~1,600 one-point calls by iterating its chain three times and bisecting 50
times a quantile; now one linear solve and a safeguarded Newton search for all three quantiles (figures within 2e-12
relative). Main 73780f93 -> this round, interleaved (load 7.7-9.7 on 2 cores, CPU best of 3): switch on 8.63 / 8.65 /
8.89 -> 4.38 / 4.40 / 4.30 s; off 3.35 -> 3.48 s (noise: the off path does not run the module).
Round 55 (code55) profiled ``compare -c 64`` again (cProfile, ``-X importtime``, callgrind, an import hook): the 8
sweeps take 0.28-0.54 s CPU each (3.0 s in all, one process), as flat as before; the parent spends ~0.45 s before
the fork (imports, the pricers) and ~0.15 s after the join. Two serial costs of that end moved or cut, outputs
byte-identical (``compare`` and ``-c 64``: text, stderr, ``--json``, HTML but for plotly's div id; ``validate -o``,
``--held-out``, ``--mlperf`` against main's CSVs; the golden files): the where-wins knots no longer call np.unique,
whose np.ma.is_masked imported numpy.ma (44.4 M instructions, callgrind; analysis/win_ranges._sorted_distinct), and
the printing's first-use imports and rich's emoji table load in the parent while the workers sweep
(cli/compare_lines.warm_compare, beside report/html.warm_chart; 51.1 M instructions). Parent's time after the join,
main 9cbe5a57 vs this round alternated 4 times at load 6-8 on the 2 shared cores: 0.23-0.62 (median 0.49) vs
0.27-0.50 s (median 0.35); whole-command walls (8-15 s) and CPU (3.5-5.4 s) at that load are noise. Expected
quiet (an estimate, not measured): ~25 ms off the wall; the 2.5 s margin still rests on the per-deployment finish
vectorised across a pass.
Run: python benchmarks/bench_compare.py [--long: also ``compare -w 128k1k``] [--spread: only ``compare -c 64``, off
and with the TTFT spread on] (a source tree: PYTHONPATH=$PWD/src, an absolute path: the command runs in a temporary
folder)
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time


def sweep_only(repeats: int = 3) -> None:
    from jalapeno.analysis.comparison import compare_systems
    from jalapeno.cost.pricer import load_pricer
    from jalapeno.specs.catalog import load_model
    from jalapeno.specs.formats import get_precision
    from jalapeno.specs.workload import get_workload

    m, p, wl = load_model("deepseek-r1"), get_precision("fp8"), get_workload("8k1k")
    systems = [load_pricer(n) for n in ("jalapeno", "gb200-nvl72", "gb300-nvl72", "vera-rubin-nvl72")]
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = compare_systems(m, systems, wl, p, baseline="gb300-nvl72")
        best = min(best, time.perf_counter() - t0)
    n = sum(h.points_evaluated for h in res.headlines.values())
    print(
        f"sweep + frontiers + comparisons: {best:.3f} s (best of {repeats}); {n:,} points; "
        f"{n / best:,.0f} points/s; goal <= 1 s: {'met' if best <= 1 else 'NOT met'}"
    )


#: ``--spread``: the command with serve/ttft_spread.STEADY_SPREAD_ON set (shipped off), as ``python -c`` runs it
SPREAD_ON = "from jalapeno.serve import ttft_spread; ttft_spread.STEADY_SPREAD_ON = True; from jalapeno.cli.app import main; main()"


def whole_command(repeats: int = 3, args: tuple[str, ...] = (), goal_s: float = 3.0, spread: bool = False) -> None:
    """Wall and CPU (user + sys) time of ``jalapeno compare`` with ``args``, best of ``repeats`` runs after one
    warm-up run (which writes the bytecode cache a normal install has; a busy machine inflates the
    wall time, the CPU time much less), against the wall goal ``goal_s`` (s) and a 0.5 s margin under it.
    ``spread``: with the steady TTFT's spread switched on (:data:`SPREAD_ON`; round 52, ttftwaves52)."""
    exe = [sys.executable, "-c", SPREAD_ON] if spread else [os.path.join(os.path.dirname(sys.executable), "jalapeno")]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    walls, cpus = [], []
    with tempfile.TemporaryDirectory() as d:
        for i in range(repeats + 1):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run([*exe, "compare", *args], cwd=d, check=True, stdout=subprocess.DEVNULL, env=env)
            wall = time.perf_counter() - t0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if i:
                walls.append(wall)
                cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    wall, cpu = min(walls), min(cpus)
    print(
        f"`jalapeno {' '.join(('compare', *args))}`{' (STEADY_SPREAD_ON)' if spread else ''} wall: {wall:.2f} s, CPU {cpu:.2f} s (best of {repeats}; "
        f"goal <= {goal_s:g} s, "
        f"with margin <= {goal_s - 0.5:g} s: {'met' if wall <= goal_s - 0.5 else 'NOT met'}; load average "
        f"{os.getloadavg()[0]:.1f}); peak RSS {rss_mb:.0f} MB (goal <= 1024 MB: "
        f"{'met' if rss_mb <= 1024 else 'NOT met'})"
    )


if __name__ == "__main__":
    if "--spread" in sys.argv[1:]:  # round 52: `compare -c 64` with the steady TTFT's spread on, and off beside it
        whole_command(args=("-c", "64"))
        whole_command(args=("-c", "64"), spread=True)
        sys.exit(0)
    sweep_only()
    whole_command()
    whole_command(args=("-c", "64"))
    if "--long" in sys.argv[1:]:  # the long-prompt sweep (about 10 s a run): two runs after the warm-up
        whole_command(repeats=2, args=("-w", "128k1k"), goal_s=5.0)  # round 37's goal for the long prompts
