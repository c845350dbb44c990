"""Named unit constants. SI inside the package; conversions happen only at input and output.

Decimal prefixes for rates and vendor capacities quoted in GB; binary for capacities quoted in GiB.
"""

KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
KiB = 2.0**10
MiB = 2.0**20
GiB = 2.0**30

TFLOPS = 1e12  # FLOP/s
PFLOPS = 1e15

US = 1e-6  # seconds
MS = 1e-3

KW = 1e3  # watts
HOUR_S = 3600.0

GBIT = 1e9 / 8  # bytes per gigabit
