"""Numbers in text, unit-aware grounding and the safe arithmetic parser."""
from __future__ import annotations

import pytest

from stages.core.answer.grounding import MAX_EXPRESSION_CHARS, eval_arithmetic, grounded_number, numbers_in


def test_numbers_in_reads_separators_exponents_and_magnitude_words() -> None:
    nums = numbers_in("11,023 lbs, 1.01E+11 FLOPs, 5.6 billion USD, -3 dB, 2.5 x 10^6")
    for expected in (11023, 1.01e11, 5.6, 5.6e9, -3, 2.5e6):
        assert any(abs(n - expected) <= 1e-9 * max(1, abs(expected)) for n in nums), expected


def test_numbers_in_ignores_digits_inside_words() -> None:
    assert numbers_in("GPT3 and A100 ran 4 jobs") == [4.0]


@pytest.mark.parametrize(
    ("value", "stated", "unit"),
    [
        (24000, 24, "kWh"),  # MWh -> kWh
        (0.024, 24, "GWh"),  # MWh -> GWh
        (0.132, 13.2, None),  # percent -> fraction
        (0.719, 1438, "tons"),  # lbs -> short tons
        (652.3, 1438, "kg"),  # lbs -> kg
        (3.0, 72, "days"),  # hours -> days
        (2.5e6, 2.5, "parameters"),  # "2.5 million"
    ],
)
def test_grounded_number_allows_the_units_conversions(value: float, stated: float, unit: str | None) -> None:
    assert grounded_number(value, [stated], unit)


def test_grounded_number_refuses_other_numbers_and_foreign_conversions() -> None:
    assert not grounded_number(25, [24.0], "MWh")
    assert not grounded_number(3.0, [72.0], "MWh")  # hours -> days only for a time unit
    assert not grounded_number(0.719, [1438.0], "kWh")  # lbs -> tons only for a mass unit


def test_eval_arithmetic_value_and_operands() -> None:
    value, ops = eval_arithmetic("(1438 / 99.8) - 0.5 × 2")
    assert value == pytest.approx(1438 / 99.8 - 1.0)
    assert ops == [1438.0, 99.8, 0.5, 2.0]
    assert eval_arithmetic("13,800 / 10.7")[0] == pytest.approx(13800 / 10.7)
    assert eval_arithmetic("2^10")[0] == pytest.approx(1024)


@pytest.mark.parametrize(
    "bad",
    [
        "__import__('os').system('echo pwned')",
        "open('/etc/passwd').read()",
        "(lambda: 1)()",
        "x + 1",
        "[1][0]",
        "().__class__",
        "1 if 1 else 2",
        "9 ** 9 ** 9",  # exponent too large, refused before computing
        "1 / 0",
        "1" + "+1" * MAX_EXPRESSION_CHARS,  # too long
        "1e308 * 10",  # not a finite number
        "True + 1",
        "1; 2",
    ],
)
def test_eval_arithmetic_refuses_anything_but_arithmetic(bad: str) -> None:
    with pytest.raises(ValueError):
        eval_arithmetic(bad)


@pytest.mark.parametrize("value,stated,unit,ok", [
    (32.0, 32e9, "tokens", False),    # a dropped magnitude is not a conversion of a count
    (32e9, 32e9, "tokens", True),
    (0.25, 25.0, "percent", True),    # percent <-> fraction
    (25.0, 0.25, "fraction", True),
    (24000.0, 24.0, "kWh", True),     # SI prefix of an SI unit (MWh stated)
    (24000.0, 24.0, "GPUs", False),
    (87.09, 192.0, "kg", True),       # lbs -> kg (unit family)
    (48.0, 2.0, "hours", True),       # days -> hours
    (100.0, 0.1, "seconds", False),   # 0.1 s stated: 100 is not seconds
])
def test_strict_grounding_allows_only_what_the_unit_implies(value: float, stated: float, unit: str, ok: bool) -> None:
    assert grounded_number(value, [stated], unit, strict=True) is ok


def test_numbers_in_survives_exponents_beyond_a_float() -> None:
    # "8 x 10 512" reads like 8e512: int ** int then overflowed float conversion and crashed the stage
    got = numbers_in("a 8 x 10 512 grid, 1e999 and 3 x 10^5 and 2e-3")
    assert got[0] == 8.0 and 1.0 in got
    assert any(abs(x - 3e5) < 1e-6 for x in got) and any(abs(x - 2e-3) < 1e-12 for x in got)
