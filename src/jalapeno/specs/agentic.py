"""Agentic multi-turn workloads: presets with their sources, user TOML files, per-turn shapes.

A session (one agent task) runs ``turns`` turns. Turn k (0-based) sends the whole context so
far and asks for a reply:

    ISL_k = S + Σ_{j≤k} u_j + Σ_{j<k} r_j      (S system prompt, u tool output, r reply)

so the context grows by u + r per turn; ``think_s`` (tool execution, agent or user time)
separates the turns. With the previous turn's KV cached, turn k ≥ 1 prefills only its new
tool output u_k: its prefix E_{k−1} = ISL_k − u_k is reused. Lengths are uniform in ±``jitter``
of their means (the simulator draws them; the analytic model uses the means).

A user file (``--workload agentic:path/to/agent.toml``) has the same keys as
:class:`AgenticSpec` (``turns``, ``system_prompt_tokens``, ``tool_output_tokens``,
``reply_tokens``, ``think_s``, optional ``jitter``, ``description``, ``source``).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from jalapeno.errors import SpecError, UnknownNameError, choice_hint
from jalapeno.specs.schema_errors import as_written


#: Longest time between two turns of one session (s): one day. A named assumption, a plausibility
#: bound, not a measurement: a prefix cache (HBM, host memory, SSD tiers, docs/agentic.md §1) is not
#: sized to hold a session across longer pauses, and a think time typed in ms or µs lands far above it.
MAX_THINK_S = 86_400

#: Most turns in one session: a named plausibility bound, not a measurement: the sourced agent
#: trajectories run 29-78 turns (SWE-Bench Pro, below); ``turns = 1e8`` held the CLI for minutes.
MAX_TURNS = 10_000

#: Longest context a session may reach (tokens): 10M, Llama 4 Scout's context window (Meta, "The
#: Llama 4 herd", ai.meta.com/blog/llama-4-multimodal-intelligence, Apr 2025), the longest of a
#: public model; a model's own ``max_position_embeddings`` is checked later and is usually lower.
MAX_CONTEXT_TOKENS = 10_000_000


@dataclass(frozen=True, slots=True)
class AgenticSpec:
    """A multi-turn agent session: each turn sends the whole growing context and gets a reply.

    Attributes:
        turns: K, turns per task (>= 1).
        system_prompt_tokens: S, tokens before the first tool output (system prompt, tools, task).
        tool_output_tokens: u, mean tokens each turn appends before the model runs (tool result,
            user message).
        reply_tokens: r, mean output tokens per turn (>= 2: TPOT needs two).
        think_s: time between a reply and the next turn's request, s (tool execution, user).
        jitter: tool and reply lengths are uniform in [(1 − j)·mean, (1 + j)·mean].
        source: where the shape comes from (or the named assumption).

    Raises:
        SpecError: a non-positive count, more than :data:`MAX_TURNS` turns or a last context over
            :data:`MAX_CONTEXT_TOKENS`, a negative think time or one over :data:`MAX_THINK_S`,
            jitter outside [0, 1).
    """

    name: str
    turns: int
    system_prompt_tokens: int
    tool_output_tokens: int
    reply_tokens: int
    think_s: float
    jitter: float = 0.2
    description: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        for k in ("turns", "system_prompt_tokens", "tool_output_tokens", "reply_tokens"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise SpecError(f"agentic.{k}", f"must be a positive integer, got {v!r}", f"give {k} >= 1")
        if self.turns > MAX_TURNS:
            raise SpecError(
                "agentic.turns",
                f"{self.turns:,} turns per session is over {MAX_TURNS:,} (a plausibility "
                "bound; agent trajectories run tens of turns)",
                "give the turns of one task, e.g. 40",
            )
        if self.final_context_tokens > MAX_CONTEXT_TOKENS:
            raise SpecError(
                "agentic.turns",
                f"the last turn's context, system_prompt_tokens + turns x (tool_output_tokens "
                f"+ reply_tokens) = {self.final_context_tokens:,} tokens, is over {MAX_CONTEXT_TOKENS:,} "
                "(the longest public model context)",
                "give fewer turns or shorter tool outputs and replies",
            )
        if self.reply_tokens < 2:
            raise SpecError("agentic.reply_tokens", "TPOT needs at least 2 output tokens", "give reply_tokens >= 2")
        if not (isinstance(self.think_s, (int, float)) and np.isfinite(self.think_s) and self.think_s >= 0):
            raise SpecError(
                "agentic.think_s",
                f"must be a finite number >= 0, got {self.think_s!r}",
                "give the seconds between turns (0 for none)",
            )
        if self.think_s > MAX_THINK_S:  # think_s = 1e12 ran: tasks of 3e12 s, a KV prefix held for millennia
            raise SpecError(
                "agentic.think_s",
                f"{self.think_s:g} s between turns is over {MAX_THINK_S:,} s (one day): "
                "turns that far apart are separate sessions, not one whose prefix a KV cache holds",
                "give the seconds between turns (tool execution, user time; the presets use 2-20)",
            )
        if not (0 <= self.jitter < 1):
            raise SpecError("agentic.jitter", f"must be in [0, 1), got {self.jitter!r}", "use e.g. 0.2")

    @property
    def final_context_tokens(self) -> int:
        """Context of the last turn: system prompt + turns x (tool output + reply), tokens."""
        return self.system_prompt_tokens + self.turns * (self.tool_output_tokens + self.reply_tokens)

    @property
    def longest_context_tokens(self) -> int:
        """The longest last turn the simulator can draw (tokens): S + K·(⌊u·(1 + j)⌋ + max(2, ⌊r·(1 + j)⌋)),
        every tool output and reply at the top of its jitter, truncated as the draws are
        (serve/sim/workloads.agentic_turns). The analytic model prices the mean, :attr:`final_context_tokens`.

        >>> AgenticSpec("x", 40, 6000, 2500, 350, 2.0).longest_context_tokens  # 6000 + 40 x (3000 + 420)
        142800
        """
        top = 1 + self.jitter
        return self.system_prompt_tokens + self.turns * (
            int(self.tool_output_tokens * top + 1e-9) + max(2, int(self.reply_tokens * top + 1e-9))
        )

    def turn_isl(self) -> np.ndarray:
        """(K,) mean input tokens of each turn: S + (k + 1)·u + k·r."""
        k = np.arange(self.turns, dtype=float)
        return self.system_prompt_tokens + (k + 1) * self.tool_output_tokens + k * self.reply_tokens

    def turn_new_tokens(self) -> np.ndarray:
        """(K,) tokens each turn prefills when the previous turn's KV is cached: S + u, then u."""
        new = np.full(self.turns, float(self.tool_output_tokens))
        new[0] += self.system_prompt_tokens
        return new

    def turn_prefix_tokens(self) -> np.ndarray:
        """(K,) cached prefix each turn can reuse: 0, then E_{k−1} = ISL_k − u."""
        return self.turn_isl() - self.turn_new_tokens()

    def hit_rate_no_eviction(self) -> float:
        """Prefix-cache hit rate of a session that never evicts: 1 − Σ new / Σ ISL
        (every token is prefilled once, in the turn it first appears)."""
        return float(1 - self.turn_new_tokens().sum() / self.turn_isl().sum())

    def as_dict(self) -> dict:
        """The spec as JSON (its fields and the final context, tokens; think time in s)."""
        return {
            "agentic": self.name,
            "turns": self.turns,
            "system_prompt_tokens": self.system_prompt_tokens,
            "tool_output_tokens": self.tool_output_tokens,
            "reply_tokens": self.reply_tokens,
            "think_s": self.think_s,
            "jitter": self.jitter,
            "final_context_tokens": self.final_context_tokens,
        }


_SWE = (
    "median SWE-agent trajectory length 29-78 steps per task (nilenso SWE-Bench Pro trajectory analysis, "
    "2,920 trajectories of 4 models; nilenso.github.io/swe-bench-pro-cost-token-time-analysis)"
)

_TRACELAB = (
    "TraceLab (Zhu et al., 'TraceLab: Characterizing Coding Agent Workloads for LLM Serving', arXiv 2606.30560, "
    "June 2026; tracelab.cs.washington.edu public pool: 4,265 Claude Code / Codex sessions, 357,161 agent steps, "
    "54.9B input tokens of which 52.6B cache reads, 186.9M output tokens)"
)
_MANUS = (
    "Manus, 'Context Engineering for AI Agents: Lessons from Building Manus' (Yichao Ji, 2025-07-18, "
    "manus.im/blog): average input-to-output token ratio ~100:1, ~50 tool calls in a typical task"
)

#: Presets. Turn counts are sourced where a public figure exists; token sizes and think times
#: are named assumptions (docs/agentic.md §2 gives the reasoning for each), cross-checked in aggregate
#: against published agent traces (tests/unit/test_agentic_specs.py): the coding agent's prefix-cache
#: hit rate against TraceLab's cache-read share of input tokens (52.6B / 54.9B = 95.8%; the preset's
#: 95.9%) and its 2 s tool time against TraceLab's Codex exec_command calls (97.8 h end to end over
#: 184k calls = 1.9 s each); the research agent's input-to-output ratio (99.5:1) against Manus's ~100:1.
#: Published traces run longer than the presets (TraceLab: 84 steps and ~154K input tokens a step on
#: average; Manus ~50 tool calls): the presets stay inside DeepSeek-R1's 163,840-token window.
AGENTIC_PRESETS = {
    "coding-agent": AgenticSpec(
        "coding-agent",
        40,
        6000,
        2500,
        350,
        2.0,
        description="40 turns, context 6K -> ~120K tokens, 2 s tool time",
        source=f"turns: {_SWE}; 6K system prompt + tool schemas, ~2.5K-token tool outputs (file reads, test logs), "
        "~350-token replies (one tool call or edit) and 2 s tool execution are assumptions, cross-checked against "
        f"{_TRACELAB}: its cache-read share 95.8% (the preset's hit rate 95.9%), Codex exec_command 1.9 s a call "
        "end to end (97.8 h over 184k calls; the preset's 2 s); its steps run longer (84 a session, ~154K input "
        "tokens a step, 294 input tokens per output token against the preset's 183)",
    ),
    "research-agent": AgenticSpec(
        "research-agent",
        20,
        3000,
        4000,
        500,
        3.0,
        description="20 turns, context 3K -> ~93K tokens, 3 s search/fetch time",
        source="assumption: a browsing agent that searches and reads ~20 pages per question, each page trimmed "
        "to ~4K tokens, ~500-token replies (reasoning + next query), ~3 s per web search/fetch; cross-checked "
        f"against {_MANUS}: the preset reads 99.5 input tokens per output token (995,000 / 10,000), in fewer turns",
    ),
    "long-memory-chat": AgenticSpec(
        "long-memory-chat",
        12,
        16000,
        300,
        600,
        20.0,
        description="12 turns over a 16K-token memory, context 16K -> ~27K, 20 s between user messages",
        source="assumption: a chat assistant with ~16K tokens of retrieved long-term memory + system prompt, "
        "~300-token user messages, ~600-token replies, a user who reads and types for ~20 s",
    ),
    "chat-agent": AgenticSpec(
        "chat-agent",
        8,
        1500,
        600,
        300,
        5.0,
        description="8 turns, context 1.5K -> ~8.7K tokens, 5 s user/tool time",
        source="assumption (the simulator's original short chat preset)",
    ),
}

_KEYS = {
    "turns": int,
    "system_prompt_tokens": int,
    "tool_output_tokens": int,
    "reply_tokens": int,
    "think_s": float,
    "jitter": float,
    "description": str,
    "source": str,
    "name": str,
}


def agentic_from_toml(path: str | Path) -> AgenticSpec:
    """Read a user agentic workload file (keys as :class:`AgenticSpec`).

    Raises:
        SpecError: missing file, TOML syntax, an unknown or missing key, a bad value (named).
    """
    from jalapeno.specs.files import parse_toml, read_user_text, toml_syntax_fix

    p = Path(path)
    text = read_user_text(
        p, "an agentic workload TOML file", f"use a preset ({', '.join(AGENTIC_PRESETS)}) or the path of a TOML file"
    )
    try:
        data = parse_toml(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(
            str(p), f"malformed TOML: {e}", toml_syntax_fix(text, p, "turns = 40 (docs/agentic.md)")
        ) from None
    unknown = sorted(set(data) - set(_KEYS))
    table = next((k for k in unknown if isinstance(data[k], dict) and set(data[k]) & set(_KEYS)), None)
    if table is not None:  # [agent] turns = 40 ...: was 'agent: unknown key', its keys unread (break55)
        raise SpecError(
            f"{p.name}: {table}",
            f"a [{table}] table holds the workload's keys ({', '.join(sorted(set(data[table]) & set(_KEYS)))}), "
            "which the file reads at its top level",
            f"remove the [{table}] header line so its keys are top-level (docs/agentic.md §2)",
        )
    if unknown:
        raise SpecError(
            f"{p.name}: {unknown[0]}", f"unknown key{choice_hint(unknown[0], _KEYS)}", f"use only {', '.join(_KEYS)}"
        )  # 'turn = 40' named no key meant (break50)
    for k in ("turns", "system_prompt_tokens", "tool_output_tokens", "reply_tokens", "think_s"):
        if k not in data:
            raise SpecError(f"{p.name}: {k}", "missing", f"add {k} = <number> (docs/agentic.md §2)")
    kw = {}
    for k, v in data.items():
        typ = _KEYS[k]
        ok = (
            (isinstance(v, int) and not isinstance(v, bool))
            if typ is int
            else (isinstance(v, (int, float)) and not isinstance(v, bool))
            if typ is float
            else isinstance(v, str)
        )
        if not ok:
            # was 'expected int ... write turns as a int'
            kind, example = {int: ("a whole number", f"{k} = 40"), float: ("a number", f"{k} = 2.5")}.get(
                typ, ("text in double quotes", f'{k} = "..."')
            )
            raise SpecError(f"{p.name}: {k}", f"must be {kind}, got {as_written(v)}", f"write e.g. {example}")
        kw[k] = float(v) if typ is float else v
    if not kw.get("name", "x").strip():  # name = "" titled every table 'agentic:' with no name
        raise SpecError(
            f"{p.name}: name",
            f"is empty ({kw['name']!r})",
            f'write name = "{p.stem}", or leave it out for the file\'s name',
        )
    kw.setdefault("name", p.stem)
    kw.setdefault("source", f"user file {p.name}")
    try:
        return AgenticSpec(**kw)
    except SpecError as e:
        raise SpecError(f"{p.name}: {e.field.removeprefix('agentic.')}", e.problem, e.fix) from None


def get_agentic(name: str) -> AgenticSpec:
    """A preset by name, or a TOML file by path (``agentic:`` prefix allowed).

    Raises:
        UnknownNameError: neither a preset nor a ``.toml`` path. SpecError: a bad file, or
            ``agentic:`` with nothing after it.
    """
    key = name.removeprefix("agentic:").strip()
    if not key:  # 'agentic:' ran the coding-agent preset, silently
        raise SpecError(
            "--workload",
            "'agentic:' names no agentic preset or file",
            f"write agentic:{'|agentic:'.join(AGENTIC_PRESETS)} or agentic:path/to/agent.toml",
        )
    if key in AGENTIC_PRESETS:
        return AGENTIC_PRESETS[key]
    if key.lower().endswith(".toml") or Path(key).exists():  # A.TOML too (round 32 read an existing one only)
        return agentic_from_toml(key)
    raise UnknownNameError(
        "--workload",
        f"unknown agentic preset {key!r}{choice_hint(key, AGENTIC_PRESETS)}",
        f"use agentic:{'|agentic:'.join(AGENTIC_PRESETS)} or agentic:path/to/agent.toml",
    )
