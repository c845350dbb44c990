"""Constructor checks of the SI hardware dataclasses (specs/hardware.Chip, LinkLevel, System) built through the API.

A system read from a file is checked by the file path instead (pydantic, specs/plausibility's ranges, under the
file's keys and units); :data:`FILE_BUILD` marks that build so the constructors' checks stand aside. Split from
specs/hardware.py (round 43) to keep it under the module budget.
"""

from __future__ import annotations

import math
import numbers
from contextvars import ContextVar

from jalapeno.errors import SpecError

#: True while specs/system_load.system_from_dict builds a system from a file: the file path's own checks (pydantic, then
#: specs/plausibility's ranges and relations under the file's keys and units) run in place of the constructors',
#: so a value that overflows in SI (1e300 TB/s -> inf) is named as the file's key with its plausible range, not as
#: ``Chip.hbm_bandwidth_bytes_per_s`` (tests/cli/test_cli_breakit16.py).
FILE_BUILD: ContextVar[bool] = ContextVar("jalapeno_file_build", default=False)


def check_number(
    cls: str,
    name: str,
    v,
    low: float = 0.0,
    strict: bool = True,
    high: float | None = None,
    unit: str = "",
    integer: bool = False,
) -> None:
    """Refuse a field of a directly built dataclass (specs/hardware.Chip, LinkLevel, System) that is
    not a finite number above ``low`` (at least, where not ``strict``) and at most ``high``: the file path
    checks the same and more (specs/system_file.py, specs/plausibility.py); ``Chip(hbm_capacity_bytes=-1)`` built
    through the API was priced (break42).

    Raises:
        SpecError: naming ``cls.name``, the value and the fix.
    """
    if FILE_BUILD.get():
        return
    ok = (
        isinstance(v, numbers.Integral if integer else numbers.Real)
        and not isinstance(v, bool)
        and math.isfinite(v)
        and (v > low if strict else v >= low)
        and (high is None or v <= high)
    )
    if not ok:
        span = f"{'above' if strict else 'at least'} {low:g}" + (f" and at most {high:g}" if high is not None else "")
        raise SpecError(
            f"{cls}.{name}",
            f"must be {'an integer' if integer else 'a finite number'} {span}{unit}, got {v!r}",
            f"give {name} in SI units (a system TOML's keys are converted by load_system), or build the "
            "system with load_system / a variant file, which check every field",
        )


def check_usable(usable: float, capacity: float) -> None:
    """Refuse a directly built chip whose engine-visible HBM ``usable`` exceeds its nominal ``capacity`` (bytes): the
    memory fit would admit KV cache the chip does not have (``replace(chip, hbm_capacity_bytes=96e9)`` on a 141 GB
    H200 kept 141 GB usable). The file path checks the same under the file's keys (specs/system_load.system_from_dict),
    with the same 1e-4 relative slack (a GB/GiB rounding is not refused).

    Raises:
        SpecError: naming ``Chip.hbm_usable_bytes``, both figures and the fix.
    """
    if not FILE_BUILD.get() and usable > capacity * 1.0001:
        raise SpecError(
            "Chip.hbm_usable_bytes",
            f"usable {usable:.6g} B exceeds hbm_capacity_bytes, {capacity:.6g} B",
            "set hbm_usable_bytes <= hbm_capacity_bytes (a chip that lowers its capacity lowers usable too: "
            "dataclasses.replace(chip, hbm_capacity_bytes=C, hbm_usable_bytes=min(chip.hbm_usable_bytes, C)))",
        )
