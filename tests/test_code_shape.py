"""The product stays readable: the limits bench/code_shape.py measures (issue 44)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.code_shape import shape

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def measured() -> dict[str, object]:
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        return shape(ROOT)
    finally:
        os.chdir(cwd)


def test_no_product_file_is_over_400_lines(measured: dict) -> None:
    assert measured["files_over_400"] == 0, measured["largest_files"]


def test_no_function_takes_more_than_8_parameters(measured: dict) -> None:
    """A function takes its params object, not keyword copies of its fields."""
    assert measured["functions_over_8_params"] == []


def test_product_comments_say_why_in_general_words(measured: dict) -> None:
    """The question or document that motivated a rule belongs in its test, not in the product's comments."""
    assert measured["comments_naming_question_ids"] == 0, measured["comment_examples"]
    assert measured["comments_naming_documents"] == 0, measured["comment_examples"]


def test_params_are_the_knobs_a_user_turns(measured: dict) -> None:
    assert measured["params_keys"] <= 50 and measured["params_booleans"] <= 3


def test_readme_and_results_stay_small(measured: dict) -> None:
    assert measured["readme_lines"] <= 250
    assert measured["tracked_under_bench_results"] <= 100
