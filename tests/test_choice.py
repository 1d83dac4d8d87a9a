"""Which of several is the highest or lowest: the reader copies the candidates, code picks (answer/choice.py)."""
from __future__ import annotations

import json

import pytest

from stages.core.answer import analyst, choice
from stages.core.answer.params import AnswerParams
from stages.core.answer.record import ContextBlock
from stages.core.answer.typed_answer import TypedMember, TypedQuestion, answer_question_typed
from tests.test_analyst import SETUP, Scripted

SEGMENTS = [ContextBlock("BANK_2022_10Q", "Segment results | Net income | Consumer Banking: 2,100 | Commercial "
                                          "Banking: 3,725 | Asset Management: 1,050 | Corporate: (473)")]
REGIONS = [ContextBlock("PHARMA_2023_10Q", "Revenues by region, % change: United States -42% | Developed Europe -18% "
                                           "| Emerging Markets 6%")]


@pytest.mark.parametrize("question, highest, fall", [
    ("In 2022 Q2, which of the bank's business segments had the highest net income?", True, False),
    ("Which of the bank's segments had the lowest net revenue in 2021 Q1?", False, False),
    ("Among operations, investing, and financing activities, which brought in the most (or lost the least) cash?",
     True, False),
    ("For the company, which geographic region had the biggest drop in revenues (on a percentage basis)?", True, True),
])
def test_a_superlative_which_question_asks_a_choice(question, highest, fall):
    assert choice.asked_choice(question) == choice.Choice(highest, fall)


@pytest.mark.parametrize("question", [
    "Which debt securities are registered to trade on a national securities exchange?",  # no superlative
    "What is the largest risk the company names?",  # no "which"
    "Is the company's largest segment growing? Which one is it?",  # the superlative is not in a which-question
])
def test_other_questions_ask_no_choice(question):
    assert choice.asked_choice(question) is None


def test_code_picks_the_extreme_of_the_stated_candidates():
    high = choice.Choice(highest=True)
    data = {"units": [1], "answer": "Consumer Banking",  # the reader's own pick is wrong; its copies are right
            "candidates": [{"name": "Consumer Banking", "value": 2100}, {"name": "Commercial Banking", "value": 3725},
                           {"name": "Asset Management", "value": 1050}]}
    r = choice.read_choice(high, data, SEGMENTS)
    assert r.value == "Commercial Banking" and r.grounded and "3,725" in r.expression
    # a parenthesised loss copied without its sign is the loss it is: the lowest
    data["candidates"].append({"name": "Corporate", "value": 473})
    assert choice.read_choice(choice.Choice(highest=False), data, SEGMENTS).value == "Corporate"


def test_made_up_numbers_decide_nothing_and_the_readers_answer_stands():
    data = {"units": [1], "answer": "Asset Management",
            "candidates": [{"name": "Consumer Banking", "value": 9999}, {"name": "Asset Management", "value": 1050}]}
    r = choice.read_choice(choice.Choice(highest=True), data, SEGMENTS)
    assert r.value == "Asset Management" and r.expression == ""  # one stated candidate: no comparison
    # another row's number is not this candidate's: Commercial Banking's 3,725 copied for Consumer Banking
    swapped = {"units": [1], "answer": "Consumer Banking", "candidates": [
        {"name": "Consumer Banking", "value": 3725}, {"name": "Asset Management", "value": 1050}]}
    assert choice.grounded(swapped["candidates"], SEGMENTS) == [("Asset Management", 1050.0)]
    assert choice.read_choice(choice.Choice(highest=True), swapped, SEGMENTS).value == "Consumer Banking"
    assert choice.read_choice(choice.Choice(highest=True), {"units": [1], "answer": "", "candidates": []},
                              SEGMENTS).is_blank


def test_the_biggest_drop_is_the_most_negative_change_or_the_largest_fall_written_as_a_size():
    fall = choice.Choice(highest=True, fall=True)
    signed = {"units": [1], "answer": "x", "candidates": [
        {"name": "United States", "value": -42}, {"name": "Developed Europe", "value": -18},
        {"name": "Emerging Markets", "value": 6}]}
    assert choice.read_choice(fall, signed, REGIONS).value == "United States"
    sizes = {"units": [1], "answer": "x", "candidates": [
        {"name": "United States", "value": 42}, {"name": "Developed Europe", "value": 18}]}
    # the context writes both as negatives: they are falls of 42% and 18%
    assert choice.read_choice(fall, sizes, REGIONS).value == "United States"


def test_an_analyst_choice_question_asks_for_the_candidates_and_answers_the_name():
    reply = {"units": [1], "candidates": [{"name": "Consumer Banking", "value": 2100},
                                          {"name": "Commercial Banking", "value": 3725}],
             "answer": "Consumer Banking"}
    llm = Scripted({"answer_choice": json.dumps(reply)})
    question = "In 2022 Q2, which of the bank's business segments had the highest net income?"
    out = answer_question_typed(llm, TypedQuestion("q", question, "", "text"), [TypedMember([SEGMENTS], 0)],
                                AnswerParams(max_retries=0, style="analyst"), SETUP)
    a = out[0].answer
    assert list(llm.asked[0]["schema"]["properties"]) == ["units", "candidates", "answer"]  # copies before the pick
    assert a.answer_value == "Commercial Banking" and a.ref_id == ["BANK_2022_10Q"]
    assert analyst.mode("text", question) == "choice" and analyst.mode("text", question.replace("highest", "")) is None
