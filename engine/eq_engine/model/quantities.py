"""Kubernetes quantities as exact integers in canonical units, and back.

Canonical units, Koordinator's: cpu in milli-cores, every other resource in
its base unit (bytes, GPUs, pods). Fractions round up, away from zero, as Kubernetes'
`Value()` / `MilliValue()` do. Parsing goes through `fractions.Fraction`: no float is ever
involved, so `0.1` cpu is exactly 100 and `1e3` is exactly 1000.

    >>> to_canonical("cpu", "1.5"), to_canonical("memory", "1Gi"), to_canonical("cpu", "0.1m")
    (1500, 1073741824, 1)
    >>> format_quantity("cpu", 1500), format_quantity("memory", 3 * 2**30)
    ('1500m', '3Gi')
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache
from typing import NewType

from .errors import QuantityError

ResourceName = NewType("ResourceName", str)
ResourceList = Mapping[str, int]
"""Resource name to an exact amount in canonical units."""

LIMIT = 2**56
"""Amounts a user writes above this (64 PiB of memory, 72 trillion cores) are kept at it, which
every rule reads as "no practical limit": sums of thousands of amounts stay inside int64."""


def limits(resources: Mapping[str, int] | None) -> bool:
    """Whether a max limits anything: some amount below `LIMIT` (Koordinator's own default
    group, max MaxInt64/5 for cpu and memory, limits nothing)."""
    return resources is not None and any(amount < LIMIT for amount in resources.values())


def clamp(value: int) -> int:
    return max(0, min(value, LIMIT))


_QUANTITY = re.compile(  # matched whole (`fullmatch`): "5\n" is no quantity to Kubernetes
    r"(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<binary>[KMGTPE]i)|(?P<decimal>[numkMGTPE])|[eE](?P<exponent>[+-]?[0-9]+))?"
)
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exponent: suffix for suffix, exponent in _DECIMAL.items()}
_BINARY_SUFFIX = {power: suffix for suffix, power in _BINARY.items()}
# Resources Kubernetes counts in bytes: shown with binary suffixes (Koordinator: BinarySI).
_BYTE_RESOURCES = frozenset({"memory", "ephemeral-storage", "storage"})
# Kubernetes refuses quantities with an exponent this large; it also stops a "1e999999999"
# from turning into a number with a billion digits.
_MAX_EXPONENT = 100
# Digits of a quantity's number: far beyond any amount (2^63 has 19), and short enough that no
# text costs more than a moment to read (Python refuses ints of over 4300 digits anyway).
_MAX_DIGITS = 100


@lru_cache(maxsize=4096)
def parse_quantity(text: str) -> Fraction:
    """The exact value of a quantity text: `parse_quantity("1.5Gi") == Fraction(1610612736)`."""
    match = _QUANTITY.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise QuantityError(text)
    if len(match["number"]) > _MAX_DIGITS or len(match["exponent"] or "") > _MAX_DIGITS:
        raise QuantityError(text, f"more than {_MAX_DIGITS} digits")
    value = Fraction(match["number"])
    if match["binary"]:
        value *= 1024 ** _BINARY[match["binary"]]
    else:
        exponent = (
            _DECIMAL[match["decimal"] or ""]
            if match["exponent"] is None
            else int(match["exponent"])
        )
        if abs(exponent) > _MAX_EXPONENT:
            raise QuantityError(text, f"exponent {exponent} is out of range")
        value *= Fraction(10) ** exponent
    return -value if match["sign"] == "-" else value


def is_milli(resource: str) -> bool:
    """Whether `resource` is counted in thousandths (only cpu is)."""
    return resource == "cpu"


def to_canonical(resource: str, quantity: str | int | float) -> int:
    """A quantity of `resource` in canonical units, rounded up away from zero.

    Numbers are accepted as the API server accepts them in JSON (YAML's `cpu: 1.5` is a
    float); a float is read through its shortest text, so `0.1` means exactly one tenth.
    """
    if isinstance(quantity, bool) or not isinstance(quantity, (int, float, str)):
        raise QuantityError(quantity, "expected a quantity string or a number")
    if isinstance(quantity, int):
        return _canonical(resource, Fraction(quantity))
    return _canonical_text(resource, repr(quantity) if isinstance(quantity, float) else quantity)


@lru_cache(maxsize=8192)
def _canonical_text(resource: str, text: str) -> int:
    """Cached: a cluster repeats the same few quantity texts on thousands of pods."""
    return _canonical(resource, parse_quantity(text))


def _canonical(resource: str, value: Fraction) -> int:
    if is_milli(resource):
        value *= 1000
    whole = value.numerator // value.denominator
    if whole != value and value > 0:
        whole += 1  # floor division already rounded negatives away from zero
    return whole


def resource_list(raw: Mapping[str, str | int | float]) -> dict[str, int]:
    """A Kubernetes ResourceList in canonical units; the error names the bad key."""
    result: dict[str, int] = {}
    for name, quantity in raw.items():
        try:
            result[name] = to_canonical(name, quantity)
        except QuantityError as error:
            raise QuantityError(error.text, f"{error.reason} (resource {name})") from None
    return result


def is_bytes(resource: str) -> bool:
    """Whether `resource` is counted in bytes (memory, storage, hugepages)."""
    return resource in _BYTE_RESOURCES or resource.startswith("hugepages-")


@lru_cache(maxsize=8192)
def format_quantity(resource: str, amount: int) -> str:
    """The canonical Kubernetes text of `amount` canonical units of `resource`.

    Decimal quantities take the largest SI suffix that keeps the number whole (`2000` cpu milli
    is `2`, `1500` is `1500m`, `5000` pods is `5k`); byte quantities of 1024 or more take the
    largest binary suffix that keeps it whole (`1536Mi`, `1Gi`), else a plain number.
    """
    if amount < 0:
        return "-" + format_quantity(resource, -amount)
    if is_bytes(resource) and amount >= 1024:
        power = 0
        while power < 6 and amount % 1024 == 0:
            amount //= 1024
            power += 1
        return f"{amount}{_BINARY_SUFFIX.get(power, '')}"
    exponent = -3 if is_milli(resource) else 0
    while amount and amount % 1000 == 0 and exponent < 18:
        amount //= 1000
        exponent += 3
    if amount == 0:
        exponent = 0
    return f"{amount}{_DECIMAL_SUFFIX[exponent]}"


def format_resource_list(resources: ResourceList) -> dict[str, str]:
    """`format_quantity` over a ResourceList, keys sorted for stable output."""
    return {name: format_quantity(name, resources[name]) for name in sorted(resources)}
