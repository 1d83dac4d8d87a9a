"""A metric's operands read by code from statement rows that say the year of each value
(stages/core/answer/operand_lookup.py), and the reader's copies checked against that year. The
statements here are made up."""
from __future__ import annotations

import json

import pytest

from stages.core.answer.line_items import on_its_line, stated_amounts
from stages.core.answer.metrics import asked_metric, compute_metric
from stages.core.answer.operand_lookup import looked_up, row_amount
from stages.core.answer.params import AnswerParams
from stages.core.answer.record import ContextBlock
from stages.core.answer.typed_answer import TypedMember, TypedQuestion, answer_question_typed
from stages.core.plan.metrics import CAPEX, CASH, CFO, CURRENT_ASSETS, NET_INCOME, REVENUE
from tests.test_analyst import SETUP, Scripted
from tests.test_reader_checks import CURRENT_RATIO

INCOME = ("CONSOLIDATED STATEMENTS OF OPERATIONS (in millions) | Total net sales | 2021: 5,200 | 2020: 4,800 "
          "CONSOLIDATED STATEMENTS OF OPERATIONS (in millions) | Cost of sales | 2021: 3,100 | 2020: 2,900 "
          "CONSOLIDATED STATEMENTS OF OPERATIONS (in millions) | Net loss | 2021: (120) | 2020: 35")
CASH_FLOWS = ("CONSOLIDATED STATEMENTS OF CASH FLOWS (in millions) | Net cash provided by (used in) operating activities | "
              "2021: 640 | 2020: 610 CONSOLIDATED STATEMENTS OF CASH FLOWS (in millions) | "
              "Purchases of property and equipment | 2021: (210) | 2020: (190) "
              "CONSOLIDATED STATEMENTS OF CASH FLOWS (in millions) | Cash and cash equivalents at beginning of period | "
              "2021: 900 | 2020: 700")
BALANCE = ("CONSOLIDATED BALANCE SHEETS (in millions) | Cash and cash equivalents | December 31, 2021: 1,050 | "
           "December 31, 2020: 900 CONSOLIDATED BALANCE SHEETS (in millions) | Property and equipment, net | "
           "December 31, 2021: 2,400 | December 31, 2020: 2,300 CONSOLIDATED BALANCE SHEETS (in millions) | "
           "Total current assets | December 31, 2021: 4,120 | December 31, 2020: 3,870 CONSOLIDATED BALANCE SHEETS "
           "(in millions) | Total current liabilities | December 31, 2021: 2,060 | December 31, 2020: 1,990")


def test_a_column_key_gives_its_values_year_and_is_no_amount():
    stated = stated_amounts(BALANCE)
    assert all(s.value != 31 for s in stated)  # "December 31, 2021:" is a key
    cash = [(s.value, s.period) for s in stated if s.label.strip() == "Cash and cash equivalents"]
    assert cash == [(1050, 2021), (900, 2020)]
    loss = [s for s in stated_amounts(INCOME) if s.label.strip() == "Net loss"]
    assert [(s.value, s.negative) for s in loss] == [(120, True), (35, False)]


def test_the_row_closest_to_the_items_name_in_the_years_column():
    stated = stated_amounts(" ".join((INCOME, CASH_FLOWS, BALANCE)))
    assert row_amount(REVENUE, 2021, stated).value == 5200  # not "Cost of sales"
    assert row_amount(REVENUE, 2019, stated) is None  # no column of that year
    assert row_amount(CFO, 2020, stated).value == 610
    assert row_amount(CAPEX, 2021, stated).label.strip() == "Purchases of property and equipment"  # not PP&E, net
    assert row_amount(CASH, 2021, stated).value == 1050  # not the opening balance of the cash flows
    only_opening = stated_amounts(CASH_FLOWS)
    assert row_amount(CASH, 2021, only_opening) is None  # the beginning of 2021 is 2020's close
    two_columns = stated_amounts("STATEMENTS OF INCOME | Total net sales | Three months ended June 30, 2021: 1,300 | "
                                 "Six months ended June 30, 2021: 2,500")
    assert row_amount(REVENUE, 2021, two_columns) is None  # a quarter's and a half year's: which one is unknown
    other_line = stated_amounts("NOTES | Revenue recognized from performance obligations satisfied in prior periods | "
                                "2021: 40")
    assert row_amount(REVENUE, 2021, other_line) is None  # a label with many words of its own is another line


def test_every_operand_is_looked_up_or_none_is():
    stated = stated_amounts(" ".join((INCOME, CASH_FLOWS, BALANCE)))
    asked = asked_metric("What is the FY2021 free cash flow?")
    copied, rows = looked_up(asked, stated)
    assert copied == {"operating_cash_flow_FY2021": 640, "capital_expenditure_FY2021": -210} and len(rows) == 2
    asked = asked_metric("What is the FY2021 net profit margin?")
    assert looked_up(asked, stated)[0]["net_income_FY2021"] == -120  # a loss in parentheses
    quick = asked_metric("What is the FY2021 quick ratio?")
    assert looked_up(quick, stated) is None  # no receivables row
    mixed = stated_amounts(BALANCE.replace("Total current liabilities", "Total current liabilities (in thousands)"))
    assert looked_up(asked_metric(CURRENT_RATIO), mixed) is None  # the operands' tables state different scales


def test_an_operand_from_another_years_column_is_not_read_from_its_line():
    stated = stated_amounts(BALANCE)
    assert on_its_line(3870, CURRENT_ASSETS.names, stated, 2020) is not None
    assert on_its_line(3870, CURRENT_ASSETS.names, stated, 2021) is None
    assert on_its_line(3870, CURRENT_ASSETS.names, stated) is not None  # no year asked: any column


def test_rows_that_state_every_operand_answer_without_asking_the_reader():
    llm = Scripted({"answer_metric": json.dumps({"units": [1], "total_current_assets_FY2021": 3870,
                                                 "total_current_liabilities_FY2021": 2060})})  # FY2020's column
    out = answer_question_typed(llm, TypedQuestion("q", CURRENT_RATIO, "", "numeric"),
                                [TypedMember([[ContextBlock("ACME_2021_10K", BALANCE)]], 0)],
                                AnswerParams(style="analyst"), SETUP)[0]
    assert (out.answer.answer_value, out.level, llm.asked) == ("2.00", 0, [])
    assert "total_current_assets_FY2021 = 4120" in out.answer.explanation and out.answer.ref_id == ["ACME_2021_10K"]
    # the FY2021 column not keyed by its year: the reader copies, and its copy of FY2020's column is refused
    unkeyed = [TypedMember([[ContextBlock("ACME_2021_10K", BALANCE.replace("December 31, 2021: ", ""))]], 0)]
    out = answer_question_typed(llm, TypedQuestion("q", CURRENT_RATIO, "", "numeric"), unkeyed,
                                AnswerParams(style="analyst"), SETUP)[0]
    assert [s["name"] for s in llm.asked] == ["answer_metric"] and out.answer.is_blank
    llm.replies["answer_metric"] = json.dumps({"units": [1], "total_current_assets_FY2021": 4120,
                                               "total_current_liabilities_FY2021": 2060})
    out = answer_question_typed(llm, TypedQuestion("q", CURRENT_RATIO, "", "numeric"), unkeyed,
                                AnswerParams(style="analyst"), SETUP)[0]
    assert out.answer.answer_value == "2.00"
    assert row_amount(NET_INCOME, 2020, stated_amounts(INCOME)).value == 35


DEBT_AND_TAXES = ("CONSOLIDATED BALANCE SHEETS (in millions) | Current portion of long-term debt | 2022: 150 | 2021: 90 "
                  "CONSOLIDATED BALANCE SHEETS (in millions) | Long-term debt | 2022: 2,850 | 2021: 3,010 "
                  "CONSOLIDATED STATEMENTS OF INCOME (in millions) | Income before income taxes | 2022: 1,000 | "
                  "2021: 800 CONSOLIDATED STATEMENTS OF INCOME (in millions) | Provision for income taxes | 2022: 210 | "
                  "2021: 160")


def test_debt_on_the_balance_sheet_and_a_tax_rates_change_are_computed_from_their_rows():
    stated = stated_amounts(DEBT_AND_TAXES)
    debt = asked_metric("Has Acme increased its debt on balance sheet between FY2022 and the FY2021 period?")
    assert debt is not None and debt.metric.name == "total debt"
    copied, _ = looked_up(debt, stated)
    assert copied == {"long_term_debt_FY2022": 2850, "short_term_debt_FY2022": 150}  # not the current portion
    tax = asked_metric("How much has the effective tax rate of Acme changed between FY2021 and FY2022?")
    assert tax is not None and tax.metric.name == "effective tax rate change"
    copied, _ = looked_up(tax, stated)
    assert copied["income_tax_expense_FY2021"] == 160 and copied["pretax_income_FY2021"] == 800  # not pre-tax
    assert compute_metric(tax, copied).value == pytest.approx(1.0)  # 21% after 20%: one point
    intensive = asked_metric("Is Acme a capital intensive business based on FY 2022 data?")
    assert intensive is not None and intensive.metric.name == "capital expenditure as a share of revenue"
    assert asked_metric("Which debt securities are registered to trade on a national securities exchange under "
                        "Acme's name as of 2023?") is None


def test_a_markdown_statement_gives_each_value_the_year_of_its_column():
    table = ("CONSOLIDATED BALANCE SHEETS (In thousands) December 31,\n| | | 2016 | 2015 |\n"
             "| Total current assets | | 1,001,425 | 705,563 |\n| Current liabilities: | | | |\n"
             "| Total current liabilities | $ | 577,464 | $ | (334,202) |\n| Goodwill | 57,173 | |")
    stated = stated_amounts(table)
    rows = [(s.label.strip(), s.value, s.period, s.scale) for s in stated if s.value > 1000]
    assert rows[:4] == [("Total current assets", 1001425, 2016, 1e3), ("Total current assets", 705563, 2015, 1e3),
                        ("Total current liabilities", 577464, 2016, 1e3), ("Total current liabilities", 334202, 2015, 1e3)]
    assert [s.period for s in stated if s.label.strip() == "Goodwill"] == [None]  # one value, two years: unknown
    assert looked_up(asked_metric(CURRENT_RATIO.replace("2021", "2016")), stated)[0] == {
        "total_current_assets_FY2016": 1001425, "total_current_liabilities_FY2016": 577464}
    two_headers = stated_amounts("| | Three Months Ended | Six Months Ended |\n| | 2023 | 2022 | 2023 | 2022 |\n"
                                 "| Total net sales | 310 | 290 | 600 | 570 |")
    assert row_amount(REVENUE, 2023, two_headers) is None  # the quarter's or the half year's
