"""answer.style analyst checks its numbers before it answers: a metric's operand is read only from the
context line that names it, a value no company reports is refused, and an amount asked in a scale
("in USD millions") is given in it. Tables and figures here are made up."""
from __future__ import annotations

import json
import re

import pytest

from stages.core.answer import analyst
from stages.core.answer.line_items import amount_of, asked_scale, on_its_line, stated_amounts
from stages.core.answer.metrics import asked_metric
from stages.core.plan.metrics import CURRENT_ASSETS, PPE, REVENUE
from stages.core.answer.params import AnswerParams
from stages.core.answer.record import ContextBlock
from stages.core.answer.typed_answer import TypedMember, TypedQuestion, answer_question_typed
from stages.core.answer.typed_reader import Reading
from tests.test_analyst import SETUP, Scripted

TITLE = "CONSOLIDATED BALANCE SHEETS (in millions, except per share data) December 31,"
BALANCE = ContextBlock("ACME_2021_10K", f"{TITLE} | Other current assets | 2021: 310 | 290 {TITLE} | "
                                        f"Total current assets | 2021: 4,120 | 3,870")
LIABILITIES = ContextBlock("ACME_2021_10K", f"{TITLE} | Total current liabilities | 2021: 2,060 | 1,990")
PROSE = ContextBlock("ACME_2021_10K", "Net sales grew 27% to $1.7 billion in 2021. Gross margin was 46%.")
CURRENT_RATIO = "What is the FY2021 current ratio for Acme? Round your answer to two decimal places."


def test_every_amount_gets_the_words_of_its_line_and_its_scale():
    rows = [(s.label.strip(), s.value, s.scale) for s in stated_amounts(BALANCE.text)]
    assert ("Other current assets", 290.0, 1e6) in rows and ("Total current assets", 3870.0, 1e6) in rows
    assert all(v != 2021 for _, v, _ in rows)  # a column key is no amount
    prose = stated_amounts(PROSE.text)
    assert [(s.value, s.scale) for s in prose if s.value in (1.7, 27, 46)] == [(1.7, 1e9)]  # percentages are none
    assert stated_amounts("Revenue: 2021 = 1,200; 2020 = 1,100")[0].label.startswith("Revenue")
    running = stated_amounts("Other assets 658 482 Property and equipment, net 253 282 Goodwill 9,764 9,762 "
                             "Total assets 19,845 17,890")
    assert [(s.label.strip(), s.value) for s in running][2:] == [
        ("Property and equipment, net", 253), ("Property and equipment, net", 282), ("Goodwill", 9764),
        ("Goodwill", 9762), ("Total assets", 19845), ("Total assets", 17890)]  # each line its own words
    assert on_its_line(19.845, PPE.names, running) is None  # total assets is no PP&E line


def test_an_operand_is_read_only_from_the_line_that_names_it():
    stated = stated_amounts(BALANCE.text)
    assert on_its_line(4120, CURRENT_ASSETS.names, stated) is not None
    assert on_its_line(4.12, CURRENT_ASSETS.names, stated) is None  # three digits moved by 1,000 say too little
    assert on_its_line(310, CURRENT_ASSETS.names, stated) is None  # "other current assets" is another line
    assert on_its_line(4120, REVENUE.names, stated) is None  # the digits are stated, on no revenue line
    assert on_its_line(27, REVENUE.names, stated_amounts(PROSE.text)) is None  # a growth rate, not an amount


def unkeyed(block: ContextBlock) -> ContextBlock:
    """The block with its column keys ("2021: ") removed: rows that do not say the year of their values."""
    return ContextBlock(block.doc_id, re.sub(r"\b(?:19|20)\d\d: ", "", block.text))


def _metric(question: str, reply: dict, levels: list[list[ContextBlock]]):
    replies = {"answer_metric": json.dumps(reply)}
    out = answer_question_typed(Scripted(replies), TypedQuestion("q", question, "", "numeric"),
                                [TypedMember(levels, 0)], AnswerParams(max_retries=len(levels) - 1, style="analyst"),
                                SETUP)[0]
    return out.answer, out.level


def test_grounded_operands_answer_and_others_fail_to_the_wider_context_then_refuse():
    right = {"units": [1, 2], "total_current_assets_FY2021": 4120, "total_current_liabilities_FY2021": 2060}
    a, level = _metric(CURRENT_RATIO, right, [[unkeyed(BALANCE), unkeyed(LIABILITIES)]])
    assert a.answer_value == "2.00" and level == 0
    # (rows without year keys: the reader's copies decide, not the rows read by code)
    # the first level lacks the liabilities line: the reading fails there and succeeds on the wider context
    a, level = _metric(CURRENT_RATIO, right, [[unkeyed(BALANCE), PROSE],
                                              [unkeyed(BALANCE), PROSE, unkeyed(LIABILITIES)]])
    assert a.answer_value == "2.00" and level == 1
    # another row's digits (other current assets) and a placeholder: refused at every level where no row
    # says its year (else the rows are read by code: test_operand_lookup)
    for wrong in ({**right, "total_current_assets_FY2021": 310}, {**right, "total_current_liabilities_FY2021": 1.0}):
        a, _ = _metric(CURRENT_RATIO, wrong, [[unkeyed(BALANCE), unkeyed(LIABILITIES)],
                                              [unkeyed(BALANCE), unkeyed(LIABILITIES), PROSE]])
        assert a.is_blank


INCOME = ContextBlock("ACME_2021_10K", "STATEMENTS OF INCOME (in millions) | Net sales | 2021: 1,700 | 2020: 1,500 "
                                       "STATEMENTS OF INCOME (in millions) | Operating income | 2021: 1,790 | 2020: 90")


@pytest.mark.parametrize(("question", "reply", "answered"), [
    ("What is Acme's FY2021 operating margin (as a %)?", {"operating_income_FY2021": 1790, "revenue_FY2021": 1700},
     False),  # 105%: more profit than sales
    ("What is Acme's FY2020 operating margin (as a %)?", {"operating_income_FY2020": 90, "revenue_FY2020": 1500}, True),
    ("What is Acme's year-over-year change in revenue from FY2020 to FY2021 (in percents)?",
     {"revenue_FY2021": 1700, "revenue_FY2020": 1500}, True),
])
def test_a_value_no_company_reports_is_refused(question, reply, answered):
    a, _ = _metric(question, {"units": [1], **reply}, [[INCOME]])
    assert a.is_blank != answered


def test_plausible_bounds_are_written_for_every_ratio_and_percent():
    for q in ("FY2021 gross margin", "FY2021 days payable outstanding", "FY2021 inventory turnover",
              "FY2021 quick ratio", "FY2021 return on assets", "revenue growth FY2021"):
        asked = asked_metric(q)
        assert asked is not None and asked.metric.plausible != (float("-inf"), float("inf")), q


def test_an_amount_asked_in_a_scale_is_given_in_it():
    assert asked_scale("What is the FY2021 capex (in USD millions)?") == (1e6, "million USD")
    assert asked_scale("Answer in USD billions.") == (1e9, "billion USD") and asked_scale("What is capex?") is None
    assert amount_of(59.268, stated_amounts(f"{TITLE} | Total assets | 2021: 59,268")) == pytest.approx(59.268e9)
    question = "What was Acme's FY2021 net sales? Answer in USD millions."
    for reply, units in (({"value": 1.7}, [PROSE]), ({"value": 1700}, [INCOME]), ({"value": 1.7}, [INCOME])):
        reading, unit = analyst.in_asked_scale(question, {"units": [1], **reply}, Reading("x", (1,), True), units)
        assert (reading.value, unit) == ("1700", "million USD"), reply
    same, unit = analyst.in_asked_scale("What were net sales?", {"value": 1.7}, Reading("1.7", (1,)), [PROSE])
    assert same.value == "1.7" and unit is None  # no scale asked: as read
    _, unit = analyst.in_asked_scale(question, {"value": 3.3}, Reading("3.3", (1,)), [PROSE])
    assert unit is None  # digits the context does not state: their scale is unknown


THOUSANDS = ContextBlock("ACME_2021_10K", "BALANCE SHEETS (In thousands) | Total current assets | 2021: 1,250,000 "
                                          "BALANCE SHEETS (In thousands) | Total current liabilities | 2021: 250,000")


def test_an_amount_metric_is_given_in_the_scale_asked_from_its_lines_scale():
    reply = {"units": [1], "total_current_assets_FY2021": 1250000, "total_current_liabilities_FY2021": 250000}
    a, _ = _metric("What is Acme's FY2021 net working capital? Answer in USD millions.", reply, [[THOUSANDS]])
    assert a.answer_value == "1000.00" and a.answer_unit == "million USD"
    unstated = ContextBlock("ACME_2021_10K", THOUSANDS.text.replace(" (In thousands)", ""))
    a, _ = _metric("What is Acme's FY2021 net working capital? Answer in USD millions.", reply, [[unstated]])
    assert a.answer_value == "1000000.00" and a.answer_unit != "million USD"  # no scale written: as the lines say
    assert amount_of(1250000, stated_amounts(unstated.text)) is None


def test_operands_moved_by_one_thousand_count_together_and_only_together():
    """A reader that writes a table's thousands in millions copies every digit; the ratio stands. Digits that
    say little (250,000 as 250) or operands moved by different factors do not count."""
    table = ContextBlock("ACME_2021_10K", "BALANCE SHEETS (In thousands) | Total current assets | 2021: 1,001,425 "
                                          "BALANCE SHEETS (In thousands) | Total current liabilities | 2021: 577,464")
    moved = {"units": [1], "total_current_assets_FY2021": 1001.425, "total_current_liabilities_FY2021": 577.464}
    a, _ = _metric(CURRENT_RATIO, moved, [[unkeyed(table)]])
    assert a.answer_value == "1.73"
    a, _ = _metric(CURRENT_RATIO, {**moved, "total_current_liabilities_FY2021": 577464}, [[unkeyed(table)]])
    assert a.is_blank  # one in millions, one in thousands: a ratio off by a thousand
    a, _ = _metric("What is Acme's FY2021 net working capital? Answer in USD millions.", moved, [[unkeyed(table)]])
    assert a.answer_value == "423.96" and a.answer_unit == "million USD"
    assert on_its_line(1001.425, CURRENT_ASSETS.names, stated_amounts(table.text))[1] == 1e3
    few = {"units": [1], "total_current_assets_FY2021": 1250.0, "total_current_liabilities_FY2021": 250.0}
    a, _ = _metric(CURRENT_RATIO, few, [[unkeyed(THOUSANDS)]])
    assert a.is_blank
