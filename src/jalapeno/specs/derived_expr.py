"""The ``[derived]`` keys of a design space (specs/design_space.py): arithmetic over ``{param}`` references.

A derived key's value is an expression of numbers, ``{param}`` references to the design's parameters, + - * /,
unary minus and parentheses, evaluated on Python's ``ast`` (no ``eval``: nothing else in the expression is
accepted). Split from specs/design_space.py in round 49 (module line budget).
"""

from __future__ import annotations

import ast
import math
import operator
import re

#: a ``{param}`` reference in a derived expression
PARAM_REF = re.compile(r"\{([^{}]+)\}")
#: the binary operators an expression may use
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def evaluate(expr: str, values: dict, key: str = "", check_only: bool = False) -> float:
    """An arithmetic expression over ``{param}`` references: numbers, + - * / and parentheses only.

    >>> evaluate("2.5 * {a} + 1", {"a": 4})
    11.0

    Raises:
        ValueError: anything else in the expression, a syntax error, or (unless ``check_only``)
            a division by zero or a non-finite result for these values (named with ``key``).
    """
    names = {}

    def sub(m):
        names[f"_v{len(names)}"] = float(values[m.group(1)])
        return f"_v{len(names) - 1}"

    where = f"derived {key!r}: " if key else ""
    for ref in PARAM_REF.findall(expr):  # a name among a parameter's choices is no number to compute with
        if isinstance(values.get(ref), str):
            raise ValueError(
                f"{where}{{{ref}}} is the name {values[ref]!r} (one of its choices), not a number; "
                "derive only from numeric parameters"
            )
    try:
        tree = ast.parse(PARAM_REF.sub(sub, expr).strip() or "?", mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        raise ValueError(f"{where}{expr!r} is not a valid expression ({type(e).__name__})") from None

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.Name) and node.id in names:
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -ev(node.operand)
        raise ValueError(f"{where}{expr!r}: only numbers, {{param}} references, + - * / and parentheses are allowed")

    try:
        out = ev(tree)
    except ZeroDivisionError:
        if check_only:
            return 1.0
        raise ValueError(f"{where}{expr!r} divides by zero at {format_values(values)}") from None
    except (RecursionError, OverflowError):
        raise ValueError(f"{where}{expr!r} is too deep or too large to evaluate") from None
    if not math.isfinite(out) and not check_only:
        raise ValueError(f"{where}{expr!r} is not finite at {format_values(values)}")
    return out


def format_values(values: dict) -> str:
    """``chip.hbm_stacks = 4, ...``: a design's values as the file writes them (was a Python dict)."""
    return ", ".join(f"{k} = {v:g}" if isinstance(v, (int, float)) else f"{k} = {v!r}" for k, v in values.items())
