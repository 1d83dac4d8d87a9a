"""answer.style analyst: Yes/No with its reason, metrics computed by code, whole cited sentences,
stated refusals, no `is_blank` unit; and WattBot's style untouched.

The question wordings below are from FinanceBench's development filings outside the 20-filing
subset that bench/financebench.py measures (the rules were written from those), shortened."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import polars as pl
import pytest

from stages.core.answer import analyst, analyst_text
from stages.core.answer.metrics import asked_amount, asked_metric, compute_metric, decided_yes, per_year_values
from stages.core.answer.params import AnswerParams
from stages.core.answer.record import Answer, ContextBlock
from stages.core.answer.submission import build_submission
from stages.core.answer.typed_answer import TypedMember, TypedQuestion, TypedSetup, answer_question_typed
from stages.core.common.params import ParamError, section
from stages.core.llm.protocol import Completion

FIXED_ASSETS = ("What is the FY2019 fixed asset turnover ratio for Activision Blizzard? Fixed asset turnover ratio "
                "is defined as: FY2019 revenue / (average PP&E between FY2018 and FY2019). Round your answer to two "
                "decimal places.")
CAPEX_AVG = ("What is the FY2017 - FY2019 3 year average of capex as a % of revenue for Activision Blizzard? Answer "
             "in units of percents and round to one decimal place.")
DPO = ("What is Amazon's FY2017 days payable outstanding (DPO)? DPO is defined as: 365 * (average accounts payable "
       "between FY2016 and FY2017) / (FY2017 COGS + change in inventory between FY2016 and FY2017). Round your "
       "answer to two decimal places.")
WORKING_CAPITAL = ("Does American Water Works have positive working capital based on FY2022 data? If working capital "
                   "is not a useful or relevant metric for this company, then please state that and explain why.")


def test_a_named_metric_is_recognised_with_its_years_and_decimals():
    a = asked_metric(FIXED_ASSETS)
    assert a is not None and a.metric.name == "fixed asset turnover" and a.years == (2019,) and a.decimals == 2
    assert [n for n, _ in a.fields()] == ["revenue_FY2019", "net_ppe_FY2019", "net_ppe_FY2018"]
    avg = asked_metric(CAPEX_AVG)
    assert avg is not None and avg.years == (2017, 2018, 2019) and avg.decimals == 1 and avg.metric.percent
    cagr = asked_metric("What is Lockheed Martin's 2 year total revenue CAGR from FY2020 to FY2022 (in units of "
                        "percents and round to one decimal place)?")
    assert cagr is not None and [n for n, _ in cagr.fields()] == ["revenue_FY2022", "revenue_FY2020"]
    # a line item's amount asked in a scale is read like a one-operand metric; without a scale its name asks nothing
    assert asked_metric("What is the FY2018 capital expenditure amount (in USD millions) for 3M?") is None
    capex = asked_amount("What is the FY2018 capital expenditure amount (in USD millions) for 3M?")
    assert capex is not None and capex.metric.amount
    assert [n for n, _ in capex.fields()] == ["capital_expenditure_FY2018"]
    assert capex.unit == (1e6, "million USD")
    ebitda = asked_metric("What is Acme's FY2021 operating income + depreciation and amortization (unadjusted EBITDA) "
                          "in USD millions?")
    assert ebitda is not None and [n for n, _ in ebitda.fields()] == ["operating_income_FY2021",
                                                                     "depreciation_and_amortization_FY2021"]
    assert asked_amount("What drove the change in capital expenditure in FY2018?") is None
    assert asked_amount("What is the FY2018 capex as a share of revenue, in USD millions?") is None  # a metric
    assert asked_metric("What is the quick ratio?") is None  # no fiscal year: the operands cannot be named


def test_metrics_are_computed_with_the_formula_named():
    done = compute_metric(asked_metric(FIXED_ASSETS), {"revenue_FY2019": 6489, "net_ppe_FY2019": 253,
                                                       "net_ppe_FY2018": 282})
    assert done is not None and done.value == pytest.approx(24.26)
    assert "revenue / average net_ppe" in done.explanation and "revenue_FY2019 = 6489" in done.explanation
    # capex printed as an outflow counts by its size; the average of the three years' percents
    done = compute_metric(asked_metric(CAPEX_AVG), {
        "capital_expenditure_FY2017": -155, "revenue_FY2017": 7017, "capital_expenditure_FY2018": -131,
        "revenue_FY2018": 7500, "capital_expenditure_FY2019": -116, "revenue_FY2019": 6489})
    assert done is not None and done.value == pytest.approx(1.9) and "averaged over FY2017-FY2019" in done.explanation
    dpo = compute_metric(asked_metric(DPO), {"accounts_payable_FY2017": 34616, "accounts_payable_FY2016": 25309,
                                             "cost_of_goods_sold_FY2017": 111934, "inventory_FY2017": 16047,
                                             "inventory_FY2016": 11461})
    assert dpo is not None and dpo.value == pytest.approx(93.86)
    assert compute_metric(asked_metric(FIXED_ASSETS), {"revenue_FY2019": 6489}) is None  # an operand missing


def test_yes_no_questions_and_the_kinds_an_analyst_reads():
    assert analyst.yes_no_question(WORKING_CAPITAL)  # the instruction after the question offers no alternative
    assert analyst.yes_no_question("As of Q2'2023, is Pfizer spinning off any large business segments?")
    assert not analyst.yes_no_question("Is revenue or net income larger?")
    assert analyst.analyst_kind(WORKING_CAPITAL, "text") == "true_false"
    assert analyst.analyst_kind(FIXED_ASSETS, "text") == "numeric"
    assert analyst.analyst_kind("As of FY2023Q1, why did Pepsico raise full year guidance?", "text") == "explain"
    assert analyst.analyst_kind("True or False: the margin grew.", "true_false") == "true_false"
    # a question that says how to write its number asks for one, even with no metric named
    assert analyst.analyst_kind("What share of sales came from Asia? Answer in units of percents.", "text") == "numeric"
    assert analyst.analyst_kind("What is the FY2019 backlog (in USD millions)?", "text") == "numeric"
    assert analyst.analyst_kind("What drove the change in backlog?", "text") == "text"
    assert analyst.request("true_false", "True or False: the margin grew.", 3) is None  # WattBot's wording
    for kind, question in (("true_false", WORKING_CAPITAL), ("numeric", FIXED_ASSETS), ("numeric", "What was revenue?"),
                           ("explain", "Why did margins fall?"), ("true_false", "True or False: the margin grew.")):
        req = analyst.request(kind, question, 3)  # the request's mode is the one decided without building it
        assert analyst.mode(kind, question) == (req.mode if req else None)
    assert analyst.mode("numeric", "What was revenue?") is None and analyst.mode("explain", "Why?") == "explain"


def test_explanations_are_whole_sentences_never_cut_mid_word():
    assert analyst.sentences("Sales rose on higher volume. Prices helped. Costs fell", 400) == \
        "Sales rose on higher volume. Prices helped."
    cut = "Sales rose because of higher volume and pri"  # the grammar's length limit cut it in a word
    assert analyst.sentences(cut, len(cut)) == "Sales rose because of higher volume."
    assert analyst.sentences("Sales rose on higher volume", 400) == "Sales rose on higher volume."
    assert analyst.sentences("G", 400) is None and analyst.sentences("}", 400) is None


@dataclass
class Scripted:
    """Replies to each request by the reply's schema name; records the schemas asked."""

    replies: dict[str, str]
    asked: list[dict] = field(default_factory=list)

    prompts: list[str] = field(default_factory=list)

    def complete(self, messages, *, temperature, seed, max_tokens, response_format=None, top_logprobs=0):
        self.asked.append(response_format["json_schema"])
        self.prompts.append(messages[-1]["content"])
        text = self.replies[response_format["json_schema"]["name"]]
        return Completion(text=text, prompt_tokens=10, completion_tokens=10, finish_reason="stop")


SETUP = TypedSetup([{"role": "system", "content": "s"}], bare=[{"role": "system", "content": "s"}])
BALANCE = [ContextBlock("AWK_2022_10K", "Total current assets 1,250 Total current liabilities 2,811"),
           ContextBlock("AWK_2022_10K", "Revenue 6,489 5,000 Property, plant and equipment, net 253 282")]


def _answer(question: str, kind: str, replies: dict[str, str], style: str, levels=None) -> tuple[Answer, Scripted]:
    llm = Scripted(replies)
    out = answer_question_typed(llm, TypedQuestion("q", question, "", kind), [TypedMember(levels or [BALANCE], 0)],
                                AnswerParams(max_retries=0, style=style), SETUP)
    return out[0].answer, llm


def test_analyst_yes_no_keeps_its_reason_and_wattbot_answers_1_or_0():
    reply = {"units": [1], "reason": "No dividend to common shareholders was declared in FY2022.",
             "answer": False}
    a, llm = _answer("Has MGM Resorts paid dividends to common shareholders in FY2022?", "true_false",
                     {"answer_yes_no": json.dumps(reply)}, "analyst")
    assert a.answer_value == "No" and a.answer.startswith("No. No dividend to common shareholders")
    assert list(llm.asked[0]["schema"]["properties"]) == ["units", "reason", "answer"]  # the reason first
    w, _ = _answer("Does it have positive working capital?", "true_false",
                   {"answer_true_false": '{"units": [1], "answer": false}'}, "wattbot")
    assert w.answer_value == "0"


def test_analyst_metric_is_computed_from_copied_line_items_or_refused():
    reply = {"units": [2], "revenue_FY2019": 6489, "net_ppe_FY2019": 253, "net_ppe_FY2018": 282}
    a, _ = _answer(FIXED_ASSETS, "text", {"answer_metric": json.dumps(reply)}, "analyst")
    assert a.answer_value == "24.26" and "fixed asset turnover = revenue / average net_ppe" in a.explanation
    assert a.answer_unit == BLANK_UNIT and a.ref_id == ["AWK_2022_10K"]
    made_up = {"units": [2], "revenue_FY2019": 1111, "net_ppe_FY2019": 222, "net_ppe_FY2018": 333}
    refused, _ = _answer(FIXED_ASSETS, "text", {"answer_metric": json.dumps(made_up)}, "analyst")
    assert refused.is_blank  # no copied line item is in the context: no answer rather than a made-up one


BLANK_UNIT = "is_blank"  # Answer's own marker for no unit; the submission writes it as an empty cell


def test_analyst_submission_refuses_in_words_cites_and_writes_no_is_blank_unit():
    questions = pl.DataFrame({"id": ["a", "b", "c"], "question": ["Why?", "Does it?", "What ratio?"],
                              "answer_unit": ["", "", ""]})
    answers = [Answer("a"), Answer("b", "No. Liabilities exceed assets.", "No", "is_blank", ["AWK_2022_10K"]),
               Answer("c", "24.26", "24.26", "is_blank", ["ATVI_2019_10K"])]
    sub = {r["id"]: r for r in build_submission(questions, answers, {}, "analyst").iter_rows(named=True)}
    assert sub["a"]["answer"] == analyst_text.REFUSAL and sub["a"]["answer_value"] == "is_blank"
    assert sub["b"]["answer"] == "No. Liabilities exceed assets. (AWK_2022_10K)"
    assert sub["c"]["answer"] == "24.26"
    assert {r["answer_unit"] for r in sub.values()} == {""} and sub["b"]["explanation"] == ""
    wattbot = build_submission(questions, answers, {})
    assert set(wattbot["answer_unit"].to_list()) == {"is_blank"} and wattbot["answer"][0] == "is_blank"


def test_style_is_validated():
    assert section(AnswerParams, "answer", {"answer": {}}).style == "wattbot"
    with pytest.raises(ParamError, match=r"answer\.style"):
        section(AnswerParams, "answer", {"answer": {"style": "banker"}})


def test_a_yes_no_question_on_a_metric_gets_the_metric_computed_first():
    reply = {"units": [1], "total_current_assets_FY2021": 1250, "total_current_liabilities_FY2021": 2811,
             "total_current_assets_FY2022": 1250, "total_current_liabilities_FY2022": 2811}
    yes_no = {"units": [3], "reason": "Working capital was negative in FY2022.", "answer": False}
    a, llm = _answer(WORKING_CAPITAL, "text", {"answer_metric": json.dumps(reply),
                                               "answer_yes_no": json.dumps(yes_no)}, "analyst")
    assert [s["name"] for s in llm.asked] == ["answer_metric", "answer_yes_no"]
    # the computed metric is one more context unit of the yes/no request, and the explanation shows it
    assert f"[3] AWK_2022_10K: {analyst.FACT_PREFIX}working capital" in llm.prompts[1]
    assert "FY2022 -1561.00" in llm.prompts[1] and "FY2022 -1561.00" in a.explanation
    assert a.answer_value == "No"


DEBT_ROWS = [ContextBlock("MSFT_2023_10K", "BALANCE SHEETS | Long-term debt | June 30, 2023: 41,990 | June 30, 2022: "
                                           "47,032"),
             ContextBlock("MSFT_2023_10K", "BALANCE SHEETS | Current portion of long-term debt | "
                                           "June 30, 2023: 5,247 | June 30, 2022: 2,749")]


@pytest.mark.parametrize("question, expected", [
    ("Has Microsoft increased its debt on balance sheet between FY2023 and the FY2022 period?", "No"),
    ("Has Microsoft decreased its debt on balance sheet between FY2023 and the FY2022 period?", "Yes"),
])
def test_a_change_the_computed_metric_shows_answers_the_yes_no_question(question, expected):
    """The reader may say "Yes" to "increased" while the fact it is shown falls (49,781 -> 47,237): a
    question about a metric's change (or its sign) is answered by the computed values."""
    says_yes = {"units": [1], "reason": "Debt rose.", "answer": True}
    a, llm = _answer(question, "text", {"answer_yes_no": json.dumps(says_yes)}, "analyst", [DEBT_ROWS])
    assert a.answer_value == expected and "FY2022 49781.00, FY2023 47237.00" in a.answer
    assert a.answer.startswith(f"{expected}. ") and "Debt rose" not in a.answer


def test_what_a_yes_no_question_on_a_metric_asks_of_its_values():
    debt = asked_metric("What is the FY2023 total debt?")
    days = asked_metric("What is the FY2023 days payable outstanding (DPO)?")
    assert per_year_values("total debt = a + b: FY2022 49781.00, FY2023 47237.00 (with a_FY2022 = 1)") == [
        (2022, 49781.0), (2023, 47237.0)]
    rising, flat = [(2022, 1.0), (2023, 2.0)], [(2022, 2.0), (2023, 2.0)]
    assert decided_yes("Did its total debt grow in FY2023?", debt, rising) is True
    assert decided_yes("Did its total debt decline in FY2023?", debt, rising) is False
    assert decided_yes("Did its total debt grow in FY2023?", debt, flat) is None
    assert decided_yes("Are its days payable outstanding improving?", days, rising) is None  # which way is better?
    assert decided_yes("Does it have positive working capital?", debt, [(2023, -5.0)]) is False
    assert decided_yes("Is its quick ratio healthy?", debt, rising) is None


def test_ebitda_margin_a_cost_share_of_revenue_and_a_profits_change_are_computed():
    ebitda = asked_metric("What is the FY2015 EBITDA % margin for Acme? Use operating income and D&A.")
    assert ebitda is not None and ebitda.metric.name == "EBITDA margin"
    done = compute_metric(ebitda, {"operating_income_FY2015": 306, "depreciation_and_amortization_FY2015": 62,
                                   "revenue_FY2015": 6780})
    assert done is not None and done.value == pytest.approx(5.43)
    cogs = asked_metric("What is the FY2018 cost of goods sold as a % of revenue? Round to one decimal place.")
    assert cogs is not None and cogs.metric.name == "cost of goods sold as a share of revenue"
    change = asked_metric("What is the year-over-year change in operating income from FY2015 to FY2016 (in percents)?")
    assert change is not None and change.years == (2016,)
    done = compute_metric(change, {"operating_income_FY2016": 1494, "operating_income_FY2015": 903})
    assert done is not None and done.value == pytest.approx(65.45)
    loss = compute_metric(change, {"operating_income_FY2016": 50, "operating_income_FY2015": -100})
    assert loss is not None and loss.value == pytest.approx(150.0)  # from a loss: the change over its size
    assert asked_metric("What is the FY2018 operating margin?").metric.name == "operating margin"
