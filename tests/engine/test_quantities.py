from fractions import Fraction

import pytest
from eq_engine import QuantityError, format_quantity, parse_quantity, to_canonical
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("resource", "text", "canonical"),
    [
        ("cpu", "100m", 100),
        ("cpu", "1.5", 1500),
        ("cpu", "2", 2000),
        ("cpu", ".5", 500),
        ("cpu", "+5", 5000),
        ("cpu", "1e3", 1_000_000),
        ("cpu", "1E3", 1_000_000),
        ("cpu", "0.1m", 1),  # a fraction of a unit rounds up
        ("cpu", "1500u", 2),
        ("cpu", "250000n", 1),
        ("memory", "2Gi", 2 * 2**30),
        ("memory", "1.5Gi", 3 * 2**29),
        ("memory", "12E", 12 * 10**18),
        ("memory", "1k", 1000),
        ("memory", "1Ki", 1024),
        ("memory", "0.5", 1),
        ("memory", "129e6", 129_000_000),
        ("memory", "1e-3", 1),
        ("nvidia.com/gpu", "4", 4),
        ("pods", "110", 110),
        ("cpu", "-1", -1000),
        ("cpu", "-0.0005", -1),  # away from zero, as Kubernetes rounds
    ],
)
def test_quantity_text_becomes_exact_canonical_integer(resource, text, canonical):
    assert to_canonical(resource, text) == canonical


@pytest.mark.parametrize(
    ("resource", "number", "canonical"),
    [
        ("cpu", 2, 2000),
        ("cpu", 0.1, 100),
        ("memory", 1024, 1024),
        ("cpu", 1.5, 1500),
    ],
)
def test_json_numbers_are_quantities_too(resource, number, canonical):
    assert to_canonical(resource, number) == canonical


@pytest.mark.parametrize(
    "text", ["", "abc", "1.2.3", "5 Gi", "1ki", "Gi", "1e", "--1", "1 ", "0x10", "1e1000"]
)
def test_invalid_text_is_an_error_naming_the_text(text):
    with pytest.raises(QuantityError) as error:
        to_canonical("cpu", text)
    assert repr(text) in str(error.value)


@pytest.mark.parametrize("value", [True, None, [1], {"a": 1}])
def test_non_quantity_types_are_rejected(value):
    with pytest.raises(QuantityError, match="expected a quantity"):
        to_canonical("cpu", value)


@pytest.mark.parametrize(
    ("resource", "amount", "text"),
    [
        ("cpu", 1500, "1500m"),
        ("cpu", 2000, "2"),
        ("cpu", 2_000_000, "2k"),
        ("cpu", 0, "0"),
        ("cpu", 1, "1m"),
        ("memory", 2**30, "1Gi"),
        ("memory", 1536 * 2**20, "1536Mi"),
        ("memory", 1000, "1k"),  # below 1024 bytes Kubernetes prints decimal
        ("memory", 1025, "1025"),
        ("memory", 5 * 2**60, "5Ei"),
        ("ephemeral-storage", 10 * 2**30, "10Gi"),
        ("hugepages-2Mi", 4 * 2**20, "4Mi"),
        ("pods", 110, "110"),
        ("pods", 5000, "5k"),
        ("nvidia.com/gpu", 8, "8"),
        ("cpu", -1500, "-1500m"),
    ],
)
def test_canonical_integers_print_as_kubernetes_canonical_quantities(resource, amount, text):
    assert format_quantity(resource, amount) == text


@given(
    resource=st.sampled_from(["cpu", "memory", "pods", "nvidia.com/gpu"]),
    amount=st.integers(min_value=0, max_value=2**70),
)
def test_printing_then_parsing_gives_the_same_amount(resource, amount):
    assert to_canonical(resource, format_quantity(resource, amount)) == amount


@given(st.fractions(min_value=0, max_value=10**6, max_denominator=1000))
def test_parsing_is_exact_with_no_float_rounding(value):
    text = f"{value.numerator / value.denominator:.20f}".rstrip("0").rstrip(".")
    assert parse_quantity(text) == Fraction(text)
