"""Quantities as people read them, for the table and the tree. `-o json` keeps the exact
canonical text; here a number may be rounded, and then it is marked `~`."""

from __future__ import annotations

from eq_engine import format_quantity, is_bytes, is_milli

WIDTH = 8
"""Characters a quantity takes at most (the columns are 9 wide)."""
ROUNDED = "~"
_BINARY = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL = ("", "k", "M", "G", "T", "P", "E")


def readable(resource: str, amount: int) -> str:
    """Bytes in the largest binary unit (`136674192043` is `~127.3Gi`, `1536Mi` is `1.5Gi`);
    cpu in cores or milli-cores (`32`, `31600m`) and counts as they are, while they fit."""
    if amount < 0:
        return "-" + readable(resource, -amount)
    if is_bytes(resource):
        power = 0
        while power < len(_BINARY) - 1 and amount >= 1024 ** (power + 1):
            power += 1
        unit = 1024**power
        tenths, rest = divmod(amount * 10, unit)
        if not rest:  # exact in tenths: 16Gi, 1.5Gi
            whole, tenth = divmod(tenths, 10)
            return f"{whole}{f'.{tenth}' if tenth else ''}{_BINARY[power]}"
        return _rounded(amount / unit, _BINARY[power])
    exact = format_quantity(resource, amount)
    if len(exact) <= WIDTH:
        return exact
    value = amount / 1000 if is_milli(resource) else float(amount)
    power = 0
    while power < len(_DECIMAL) - 1 and value >= 1000:
        value /= 1000
        power += 1
    return _rounded(value, _DECIMAL[power])


def _rounded(value: float, suffix: str) -> str:
    """`~127.3Gi`; without the decimal where that would not fit WIDTH (`~1023Gi`)."""
    shown = f"{ROUNDED}{value:.1f}{suffix}"
    return shown if len(shown) <= WIDTH else f"{ROUNDED}{value:.0f}{suffix}"
