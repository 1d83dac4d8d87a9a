"""Arithmetic done by code (stages/core/answer/arithmetic.py) and the typed reader's `operation` replies.

The dev questions that showed the 1.5B reader doing its own arithmetic wrong (wrong direction, wrong base
of a percent change, an unconverted "1.3 GW", 2.1666666 for 2.17): d108, d104, d112.
"""
from __future__ import annotations

import pytest

from stages.core.answer import typed_prompt as prompt
from stages.core.answer import typed_reader as reader
from stages.core.answer.arithmetic import compute, rounded
from stages.core.answer.params import AnswerParams
from stages.core.answer.record import ContextBlock
from stages.core.answer.typed_answer import TypedMember, TypedQuestion, TypedSetup, answer_question_typed
from stages.core.llm.protocol import Completion

AMAZON = "Energy storage capacity 1.3 GW, up from 445 megawatts (MW) in 2022."


def test_operands_are_read_back_with_their_unit_before_computing():
    v, expr = compute("difference", 1.3, 445, "By how many megawatts did storage grow?", "MW", [AMAZON])
    assert v == pytest.approx(855) and expr == "1300 - 445"
    # the model's order does not matter for a difference
    assert compute("difference", 445, 1.3, "By how many megawatts?", "MW", [AMAZON])[0] == pytest.approx(855)


def test_percent_change_divides_by_the_value_it_changed_from():
    """dev d104: "by what percentage did it fall" divides by the value before the fall."""
    fall = compute("percent_change", 0.015, 0.020, "By what percentage did emissions fall?", "percent", ["0.020 0.015"])
    assert fall[0] == pytest.approx(25.0)
    growth = compute("percent_change", 0.020, 0.015, "By what percentage did emissions increase?", "percent", [])
    assert growth[0] == pytest.approx(33.33)


def test_ratio_as_a_multiplier_is_the_larger_over_the_smaller():
    v, _ = compute("ratio", 7.410, 29.078, "How many times more energy?", "multiplier", ["29.078 Wh and 7.410 Wh"])
    assert v == pytest.approx(3.92)
    # a fraction keeps the model's order
    assert compute("ratio", 1.6, 100, "What fraction of Scope 2?", "fraction", [])[0] == pytest.approx(0.016)
    # magnitudes come back on both operands alike ("$800M" / "$40M")
    assert compute("ratio", 800, 40, "How many times larger?", "multiplier", ["$800M", "$40M"])[0] == pytest.approx(20)


def test_none_copies_and_converts_with_rounding_only_after_a_conversion():
    assert compute("none", 52, 0, "Average job length in days?", "days", ["an average job length of 52 hours"])[0] \
        == pytest.approx(2.17)
    assert compute("none", 1.005, 0, "What PUE?", "PUE", ["a PUE of 1.005"])[0] == 1.005


def test_unknown_operation_missing_operand_or_zero_division_give_nothing():
    assert compute("modulo", 1, 2, "q", "kWh") is None
    assert compute("sum", 1, None, "q", "kWh") is None
    assert compute("ratio", 1, 0, "q", "fraction") is None
    assert compute("percent_change", 0, 0, "q", "percent") is None


def test_rounding_keeps_three_significant_digits_below_one():
    assert rounded(2.16666, 2) == 2.17 and rounded(0.000156789, 2) == 0.000157 and rounded(3.14159, -1) == 3.14159


UNITS = [ContextBlock("amazon2023", AMAZON), ContextBlock("other", "Nothing numeric here.")]


def test_operation_reply_is_computed_grounded_and_pointed():
    schema = prompt.reply_schema("numeric", 2, operation=True)
    assert schema["required"] == ["units", "operation", "a", "b"]
    assert "percent_change" in schema["properties"]["operation"]["enum"]
    r = reader.read_reply("numeric", "MW", {"units": [2], "operation": "difference", "a": 1.3, "b": 445}, UNITS,
                          question="By how many MW did it grow?")
    assert (r.value, r.grounded, r.pointers) == ("855", True, (1,))  # the operands are stated in unit 1
    r = reader.read_reply("numeric", "MW", {"units": [1], "operation": "difference", "a": 7, "b": 3}, UNITS)
    assert r.value == "4" and not r.grounded  # neither operand is stated anywhere


class OneReply:
    """A fake LLM (unit test of one component): records each request, returns one canned reply."""

    def __init__(self, text: str) -> None:
        self.text, self.requests = text, []

    def complete(self, messages, **kw):
        self.requests.append((messages[-1]["content"], kw["response_format"]["json_schema"]["schema"]))
        return Completion(self.text, 10, 5, 0.1, finish_reason="stop")


def test_operands_are_asked_for_only_when_the_question_is_worded_to_compute():
    llm = OneReply('{"units": [1], "operation": "difference", "a": 1.3, "b": 445}')
    member = [TypedMember([UNITS], 0)]
    params = AnswerParams()
    setup = TypedSetup([{"role": "system", "content": "s"}], bare=[{"role": "system", "content": "s"}])
    grow = TypedQuestion("q1", "By how many megawatts did storage grow?", "MW")
    out = answer_question_typed(llm, grow, member, params, setup)
    assert '"operation"' in llm.requests[-1][0] and "a" in llm.requests[-1][1]["properties"]
    assert out[0].answer.answer_value == "855" and out[0].answer.explanation == "1300 - 445"
    llm.text = '{"units": [1], "value": 445}'
    answer_question_typed(llm, TypedQuestion("q1", "What storage capacity in MW?", "MW"), member, params, setup)
    assert llm.requests[-1][1]["properties"]["value"] == {"type": "number"}


def test_a_converted_copy_is_rounded_but_a_change_by_a_power_of_ten_is_exact():
    from stages.core.answer.arithmetic import rounded_conversion
    assert rounded_conversion(52 / 24, 52) == 2.17  # "52 hours" read for days
    assert rounded_conversion(0.75466, 754.66) == 0.75466  # kWh -> MWh
    assert rounded_conversion(7.5, 7.5) == 7.5
    r = reader.read_reply("numeric", "days", {"units": [1], "value": 52},
                          [ContextBlock("strubell2019", "with an average job length of 52 hours.")])
    assert r.value == "2.17" and r.grounded


def test_gpu_hours_and_gpu_days_convert_like_hours_and_days():
    from stages.core.answer.restate import restate
    assert restate(125, ["A p99 model training workflow takes 125 GPU days."], [], "GPU hours") == 3000


@pytest.mark.parametrize(("question", "unit", "expected"), [
    ("For a long prompt, how many times more energy does DeepSeek-R1 use on its own servers than on Azure?",
     "multiplier", "ratio"),
    ("By what percentage did the per-inference CO2 emissions of Mistral-small fall after quantization?",
     "percent", "percent_change"),
    ("How many more tCO2eq were emitted by the final runs than by the development runs?", "tCO2e", "difference"),
    ("By how many megawatts did the storage capacity grow?", "MW", "difference"),
    ("By how many percentage points did the share rise?", "percent", "difference"),
    ("By how much did the emissions fall, in percent?", "percent", "percent_change"),
    ("What share of the energy came from coal?", "percent", None),
    ("What is the combined training plus finetuning energy?", "kWh", None),
])
def test_operation_asked_by_the_wording(question, unit, expected):
    from stages.core.answer.arithmetic import operation_asked

    assert operation_asked(question, unit) == expected


def test_wording_overrides_the_models_operation_for_two_operands_only():
    """The 1.5B answers "difference" to "how many times more" (dev d608) and to "by what percentage did
    it fall" (dev d104): the wording's operation wins."""
    q = "How many times more energy does A use than B?"
    assert compute("difference", 29.078, 7.41, q, "multiplier")[0] == pytest.approx(3.92)
    q = "By what percentage did the emissions of Mistral-small fall after quantization?"
    assert compute("difference", 0.020, 0.015, q, "percent")[0] == pytest.approx(25)
    # one number (b = 0) or an operation the wording does not name: the model's choice stands
    assert compute("difference", 33, 0, q, "percent")[0] == pytest.approx(33)
    assert compute("sum", 51686, 7571, "How many times more?", "multiplier")[0] == 59257


def test_a_runaway_operand_becomes_the_stated_number_with_its_leading_digits():
    """dev d312: "b": 4000000000000000.0000000000000000e-0 for the "40" of "$40M" (the JSON grammar's 16 digits)."""
    from stages.core.answer.arithmetic import runaway, unrunaway

    text = ("For example, we estimate that it cost $800M to acquire the hardware used to train GPT-4, compared "
            "to $40M for the amortized hardware CapEx + energy cost (Figure 4).")
    assert runaway(4e15) and runaway(1.2e12) and not runaway(1.23e12) and not runaway(40.0)
    assert unrunaway(4e15, 800, [text], []) == 40  # "40" is nearer 800 than the "4" of "Figure 4"
    assert unrunaway(4e15, 800, [], [text]) == 40  # the other units when no pointed unit has it
    assert unrunaway(9e15, 800, [text], []) == 9e15  # no stated number starts with 9: unchanged
    assert unrunaway(40.0, 800, [text], []) == 40.0  # not a runaway
    q = ("How many times larger is the estimated hardware acquisition cost for training GPT-4 than its "
         "amortized hardware CapEx plus energy cost?")
    value, _ = compute("ratio", 800, 4e15, q, "multiplier", [text], [])
    assert value == pytest.approx(20.0)

