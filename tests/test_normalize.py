"""Normalisation of raw model answers to WattBot submission strings."""
from __future__ import annotations

import pytest

from stages.core.answer.normalize import (
    format_ref_ids,
    normalize_value,
    values_equal,
)
from stages.core.common.values import parse_ref_ids

NO_UNIT = "is_blank"

VALUE_CASES = [
    # (raw, answer_unit, expected)
    ("1,287", NO_UNIT, "1287"),
    ("12,345.6", "kWh", "12345.6"),
    ("1.5e6", "W", "1500000"),
    ("1.5E-6", "seconds", "0.0000015"),
    ("1.5 x 10^6", "FLOPS", "1500000"),
    ("1.5 million", "liters", "1500000"),
    ("5.439 million liters", "liters", "5439000"),
    ("2B", "parameters", "2000000000"),
    ("2 billion", "parameters", "2000000000"),
    ("175 billion parameters", "parameters", "175000000000"),
    ("3.2k", "W", "3200"),
    ("4 thousand", "queries", "4000"),
    ("1.2 trillion", "tokens", "1200000000000"),
    ("5MW", "W", "5"),  # M touching a unit is mega, not million: the number is kept
    ("4.2 billion cubic meters", "billion cubic meters", "4.2"),  # magnitude is part of the unit
    ("10-20", "W", "[10,20]"),
    ("10 to 20", "W", "[10,20]"),
    ("between 10 and 20", "W", "[10,20]"),
    ("300 W to 1000 W", "W", "[300,1000]"),
    ("80-90%", "percent", "[80,90]"),
    ("5 to 10 million", "USD", "[5000000,10000000]"),
    ("5M-10M", "parameters", "[5000000,10000000]"),
    ("-5 to -3", "C", "[-5,-3]"),
    ("[0.02, 0.1]", "500 mL bottles", "[0.02,0.1]"),
    ([10, 20], "W", "[10,20]"),
    ([10.0, "20 W"], "W", "[10,20]"),
    ([7], "W", "7"),
    (True, NO_UNIT, "1"),
    (False, NO_UNIT, "0"),
    ("True", NO_UNIT, "1"),
    ("FALSE", NO_UNIT, "0"),
    ("yes", NO_UNIT, "1"),
    ("No.", NO_UNIT, "0"),
    ("64.7 GB", "GB", "64.7"),
    ("64.7GB", "GB", "64.7"),
    ("55%", "percent", "55"),
    ("13.2 percent", "percent", "13.2"),
    ("Up to 90%", "percent", "90"),
    ("2x", "multiplier", "2"),
    ("4.3 tCO2e", "tCO2e", "4.3"),
    ("28 samples per batch", "samples", "28"),
    ("13 days of training on 512 GPUs", "days", "13"),
    ("2 papers", NO_UNIT, "2"),
    (5, "days", "5"),
    (5.0, "days", "5"),
    ("5.0", "days", "5"),
    ("64.70", "GB", "64.7"),
    (0.1 + 0.2, "ratio", "0.3"),
    (1e-7, "s", "0.0000001"),
    (10**20, "FLOPS", "100000000000000000000"),
    ("8.720430108", "multiplier", "8.720430108"),
    (None, "MWh", "is_blank"),
    ("", "MWh", "is_blank"),
    ("  ", "MWh", "is_blank"),
    ("is_blank", "MWh", "is_blank"),
    ("N/A", "MWh", "is_blank"),
    ("na", "MWh", "is_blank"),
    (float("nan"), "MWh", "is_blank"),
    ([], "MWh", "is_blank"),
    ("Unable to answer with confidence based on the provided documents.", "MWh", "is_blank"),
    ("  ML.ENERGY Benchmark ", NO_UNIT, "ML.ENERGY Benchmark"),
    ("GPT-3", NO_UNIT, "GPT-3"),
    ("2023", "year", "2023"),
    ("2023", NO_UNIT, "2023"),
    ("-5", "C", "-5"),
    ("−3.5", "C", "-3.5"),  # unicode minus
    ("~5", "days", "5"),
    ("approximately 13 days", "days", "13"),
    ("$1.2 million", "USD", "1200000"),
    ("$2.51 million", "USD", "2510000"),
    ("US$5", "USD", "5"),
    ("5 dollars", "USD", "5"),
    ("3 of 5", NO_UNIT, "3 of 5"),  # a digit in the tail of a unitless answer: text
    ("2023-05-01", NO_UNIT, "2023-05-01"),
    ("3 GPUs were used for this run", NO_UNIT, "3 GPUs were used for this run"),
]


@pytest.mark.parametrize(("raw", "unit", "expected"), VALUE_CASES)
def test_normalize_value(raw: object, unit: str, expected: str) -> None:
    assert normalize_value(raw, unit) == expected


EQUAL_CASES = [
    ("1000", "1000.5", True),
    ("1000", "1002", False),
    ("0.3", "0.30000000000000004", True),
    ("-5", "-5.004", True),
    ("-5", "5", False),
    ("[10,20]", "[10.005,20]", True),
    ("[10,20]", "[10,21]", False),
    ("[10,20]", "10", False),
    ("[10,20]", "[10,20,30]", False),
    ("GPT-3", " gpt-3 ", True),
    ("GPT-3", "GPT-4", False),
    ("1", "True", False),  # values are compared after normalisation, not re-normalised
    ("is_blank", "is_blank", True),
    ("is_blank", "", True),
    ("is_blank", "0", False),
]


@pytest.mark.parametrize(("a", "b", "equal"), EQUAL_CASES)
def test_values_equal(a: str, b: str, equal: bool) -> None:
    assert values_equal(a, b) is equal
    assert values_equal(b, a) is equal


def test_values_equal_rel_tol() -> None:
    assert values_equal("1000", "1002", rel_tol=0.01) is True


@pytest.mark.parametrize(
    ("ids", "expected"),
    [
        (["a", "b"], "['a','b']"),
        (["wu2021b"], "['wu2021b']"),
        ([" a ", "a", "b"], "['a','b']"),
        ([], "is_blank"),
        (["", "is_blank"], "is_blank"),
    ],
)
def test_format_ref_ids(ids: list[str], expected: str) -> None:
    assert format_ref_ids(ids) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("['a','b']", ["a", "b"]),
        ("['wu2021b', 'patterson2021']", ["wu2021b", "patterson2021"]),
        ('["a"]', ["a"]),
        ("a, b", ["a", "b"]),
        ("luccioni2025b", ["luccioni2025b"]),
        ("is_blank", []),
        ("['is_blank']", []),
        ("[]", []),
        ("", []),
    ],
)
def test_parse_ref_ids(text: str, expected: list[str]) -> None:
    assert parse_ref_ids(text) == expected


def test_ref_ids_round_trip() -> None:
    ids = ["dodge2022", "strubell2019"]
    assert parse_ref_ids(format_ref_ids(ids)) == ids
