"""Quantities in the table and the tree: in the units people read, `~` where rounded."""

from __future__ import annotations

import pytest
from eq_cli.display import readable

GI = 1024**3


@pytest.mark.parametrize(
    ("resource", "amount", "shown"),
    [
        ("cpu", 32_000, "32"),
        ("cpu", 500, "500m"),
        ("cpu", 31_600, "31600m"),
        ("cpu", 123_456_789, "~123.5k"),
        ("memory", 16 * GI, "16Gi"),
        ("memory", 70 * 1024**2, "70Mi"),
        ("memory", 3 * GI // 2, "1.5Gi"),
        ("memory", 136_674_192_043, "~127.3Gi"),
        ("memory", 1023 * GI + 7, "~1023Gi"),
        ("memory", 1000, "1000"),
        ("memory", 0, "0"),
        ("ephemeral-storage", 10 * 1024**4, "10Ti"),
        ("pods", 330, "330"),
        ("nvidia.com/gpu", 8, "8"),
    ],
)
def test_readable(resource, amount, shown):
    assert readable(resource, amount) == shown
    assert len(shown) <= 8
