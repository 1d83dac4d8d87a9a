"""A metric's operands read by code from statement rows that say the year of each value
(stages/core/answer/operand_lookup.py), and the reader's copies checked against that year. The
statements here are made up."""
from __future__ import annotations

import dataclasses
import json

import pytest

from stages.core.answer.line_items import on_its_line, stated_amounts, stated_scales, value_columns
from stages.core.answer.metrics import asked_metric, compute_metric
from stages.core.answer.operand_lookup import dated, in_document_scale, looked_up, row_amount
from stages.core.answer.params import AnswerParams
from stages.core.answer.record import ContextBlock
from stages.core.answer.typed_answer import TypedMember, TypedQuestion, answer_question_typed
from stages.core.plan.metrics import (CAPEX, CASH, CFO, CURRENT_ASSETS, NET_INCOME, OPERATING_INCOME, PAYABLES, PPE,
                                      REVENUE)
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


def test_an_annual_reports_unkeyed_columns_are_its_year_and_the_years_before():
    # extraction can leave a statement's period header out of its table: the rows then state no year, and an
    # annual report's first column is its own fiscal year
    rows = ("CONSOLIDATED BALANCE SHEETS (in millions) | Total current assets | $ | 4,120 | $ | 3,870\n"
            "CONSOLIDATED BALANCE SHEETS (in millions) | Total current liabilities | 2,060 | 1,990\n"
            "CONSOLIDATED BALANCE SHEETS (in millions) | Short-term borrowings | — | 75")
    stated = stated_amounts(rows)
    assert [(s.value, s.column) for s in stated] == [(4120, 0), (3870, 1), (2060, 0), (1990, 1), (75, 1)]
    assert looked_up(asked_metric(CURRENT_RATIO), stated) is None  # no year without the filing's
    copied, _ = looked_up(asked_metric(CURRENT_RATIO), dated(stated, 2021))
    assert copied == {"total_current_assets_FY2021": 4120, "total_current_liabilities_FY2021": 2060}
    assert [s.period for s in dated(stated, 2021)][-1] == 2020  # the dash held 2021's column
    assert row_amount(CURRENT_ASSETS, 2019, dated(stated, 2021)) is None
    keyed = stated_amounts(BALANCE)
    assert dated(keyed, 2030) == keyed  # a column's own key wins


@pytest.mark.parametrize("line", [
    "QUARTERLY RESULTS | Net sales | 100 | 110 | 120 | 130",  # four columns: quarters
    "SEGMENTS | Net sales | 2021: 100 | 2020: 90",  # keyed
    "RATIOS | Gross margin | 41% | 39%",  # percentages
    "Net sales | 100",  # one value: which year is unknown
    "Net sales were 100 in 2021 and 90 in 2020",  # prose
])
def test_rows_whose_columns_are_not_periods_get_no_column(line):
    assert value_columns(line) == [] and all(s.column is None for s in stated_amounts(line))


def test_a_header_naming_its_columns_with_words_keeps_them_from_being_periods():
    table = "SEGMENTS (in millions)\n| | Americas | Europe |\n| Net sales | 100 | 200 |"
    assert [s.column for s in stated_amounts(table)] == [None, None]
    assert [s.column for s in stated_amounts(table.replace("| | Americas | Europe |\n", ""))] == [0, 1]


def test_an_annual_report_answers_from_its_unkeyed_rows():
    unkeyed = BALANCE.replace("December 31, 2021: ", "").replace("December 31, 2020: ", "").replace(
        " CONSOLIDATED", "\nCONSOLIDATED")  # one row a line
    llm = Scripted({"answer_metric": json.dumps({"units": [1]})})  # a reply with no operands
    member = [TypedMember([[ContextBlock("ACME_2021_10K", unkeyed)]], 0)]
    setup = dataclasses.replace(SETUP, annual_years={"ACME_2021_10K": 2021})
    out = answer_question_typed(llm, TypedQuestion("q", CURRENT_RATIO, "", "numeric"), member,
                                AnswerParams(style="analyst"), setup)[0]
    assert (out.answer.answer_value, llm.asked) == ("2.00", [])
    assert answer_question_typed(llm, TypedQuestion("q", CURRENT_RATIO, "", "numeric"), member,  # not an annual report
                                 AnswerParams(style="analyst"), SETUP)[0].answer.is_blank and len(llm.asked) == 1


def test_a_line_items_amount_is_read_from_its_row_in_the_scale_asked():
    llm = Scripted({"answer_numeric": json.dumps({"units": [1], "value": 190})})
    member = [TypedMember([[ContextBlock("ACME_2021_10K", CASH_FLOWS)]], 0)]
    q = "What is the FY2021 capital expenditure amount (in USD billions) for Acme?"
    out = answer_question_typed(llm, TypedQuestion("q", q, "", "numeric"), member, AnswerParams(style="analyst"),
                                SETUP)[0]
    assert (out.answer.answer_value, out.answer.answer_unit, llm.asked) == ("0.21", "billion USD", [])
    unkeyed_rows = CASH_FLOWS.replace("2021: ", "").replace("2020: ", "")
    unkeyed = [TypedMember([[ContextBlock("ACME_2021_10Q", unkeyed_rows)]], 0)]
    answer_question_typed(llm, TypedQuestion("q", q, "", "numeric"), unkeyed, AnswerParams(style="analyst"), SETUP)
    assert len(llm.asked) == 1  # no year on the rows: the reader reads the number as any other


def test_a_statement_set_as_running_text_gives_each_line_its_columns():
    text = ("Current assets Cash and cash equivalents $ 2,853 $ 3,053 Accounts receivable — net of allowances of $95 "
            "and $103 5,020 4,911 Property, plant and equipment 24,873 24,914 Less: Accumulated depreciation "
            "(16,135) (16,048) Property, plant and equipment — net 8,738 8,866 Total assets $ 36,500 $ 37,987")
    stated = stated_amounts(text)
    assert [(s.value, s.column) for s in stated if "Cash" in s.label] == [(2853, 0), (3053, 1)]
    assert row_amount(PPE, 2018, dated(stated, 2018)).value == 8738  # the net line, not the gross one
    prose = stated_amounts("Total net revenue for the year ended December 31, 2020, increased by $4.8 billion")
    assert all(s.column is None for s in prose)  # a date is no pair of columns


def test_a_row_is_named_by_its_own_words_not_its_sections():
    financing = ("CASH FLOWS | Cash flows from operating activities:: Net cash provided by financing activities | "
                 "2,315 | (98)")
    assert row_amount(CFO, 2020, dated(stated_amounts(financing), 2020)) is None
    rows = stated_amounts(f"{financing}\nCASH FLOWS | Net cash provided by operating activities | 382 | 465")
    assert row_amount(CFO, 2020, dated(rows, 2020)).value == 382
    as_text = stated_amounts("Net cash provided by operating activities 3,676.2 2,807.0 Cash Flows - Investing "
                             "Activities Purchases of land, buildings, and equipment (460.8) (537.6)")
    assert row_amount(CAPEX, 2020, dated(as_text, 2020)).value == 460.8  # the section's heading is no word of its line
    assert row_amount(CFO, 2020, dated(as_text, 2020)).value == 3676.2


def test_a_statements_unit_heading_its_page_scales_its_rows():
    page = ("CONSOLIDATED BALANCE SHEETS (In thousands, except share data)\n"
            "CONSOLIDATED BALANCE SHEETS | Accounts payable | $ | 302,578 | $ | 255,028")
    stated = stated_amounts(page.split("\n")[1])
    assert {s.scale for s in stated} == {None}  # the row's own table does not say it
    assert stated_scales(page) == {1e3} and stated_scales("Net sales (Millions) 100") == {1e6}
    scaled = in_document_scale(dated(stated, 2018), stated_scales(page))
    assert row_amount(PAYABLES, 2018, scaled).scale == 1e3
    assert in_document_scale(dated(stated, 2018), {1e3, 1e6}) == dated(stated, 2018)  # two units: which is unknown


def test_the_owners_share_of_a_total_is_the_companys_line_and_the_minoritys_part_is_not():
    """"Net income attributable to shareowners of Acme" is the company's net income (its label's owners are
    no extra words); the part attributable to the noncontrolling interests is never it."""
    rows = stated_amounts("INCOME | Consolidated net income | 1,283 | 6,550\n"
                          "INCOME | Less: Net income attributable to noncontrolling interests | 35 | 23\n"
                          "INCOME | Net income attributable to shareowners of The Acme Beverage Company | "
                          "1,248 | 6,527")
    assert row_amount(NET_INCOME, 2017, dated(rows, 2017)).value == 1248
    minority = stated_amounts("INCOME | Net earnings attributable to noncontrolling interests | 2 | 1")
    assert row_amount(NET_INCOME, 2017, dated(minority, 2017)) is None
    including = stated_amounts("INCOME | Net earnings including noncontrolling interests | 1,228 | 897")
    assert row_amount(NET_INCOME, 2017, dated(including, 2017)).value == 1228


def test_money_from_selling_equipment_is_no_capital_expenditure():
    rows = stated_amounts("CASH FLOWS | Dispositions of property and equipment | 25,612 | 718\n"
                          "CASH FLOWS | Proceeds from sale of property and equipment | 40 | 12")
    assert row_amount(CAPEX, 2018, dated(rows, 2018)) is None
    spent = stated_amounts("CASH FLOWS | Capital expenditures, net of construction payable | (777) | (1,486)")
    assert row_amount(CAPEX, 2018, dated(rows + spent, 2018)).value == 777


def test_a_note_reference_is_no_amount():
    rows = stated_amounts("| Inventories, net (Note | 6) | 2,438 | 2,320 |\n| Goodwill (Notes 8 and 9) | 400 | 390 |")
    assert [(s.label.strip(), s.value, s.column) for s in rows] == [
        ("Inventories, net", 2438, 0), ("Inventories, net", 2320, 1), ("Goodwill", 400, 0), ("Goodwill", 390, 1)]


def test_a_footnote_marker_set_as_a_cell_is_no_column():
    # a balance sheet whose note markers extraction set as cells between the years' amounts
    rows = stated_amounts("| Total current assets | 7,453 | 3 | 7,659\n| Other | 1,250 | 3 |\n| Cash | 12 | 3 | 7")
    assert [(s.label.strip(), s.value, s.column) for s in rows] == [
        ("Total current assets", 7453, 0), ("Total current assets", 7659, 1),
        ("Other", 1250, 0), ("Other", 3, 1),  # a last column of 3 is a year's amount, not a marker between two
        ("Cash", 12, 0), ("Cash", 3, 1), ("Cash", 7, 2)]  # small amounts all: no marker among them


WORKING_ROWS = ("| Net sales | 16,865 | 15,740 |\n| Cost of sales | 11,108 | 10,305 |\n"
                "| Receivables | 1,680 | 1,684 |\n"
                "| Inventories | 1,559 | 1,642 |\n| Accounts payable | 2,854 | 2,746 |\n"
                "| Net earnings attributable to Acme | 2,707 | 2,131 |\n| Dividends paid | (1,244) | (1,246) |")


@pytest.mark.parametrize("question, expected", [
    ("What is the FY2019 cash conversion cycle (CCC)? Round your answer to two decimal places.",
     365 * (1600.5 / 11108 + 1682 / 16865 - 2800 / (11108 + 1559 - 1642))),
    ("What is the FY2019 days sales outstanding (DSO)?", 365 * 1682 / 16865),
    ("What is the FY2019 days inventory outstanding?", 365 * 1600.5 / 11108),
    ("What is the FY2019 dividend payout ratio?", 1244 / 2707),
    ("What is the FY2019 retention ratio?", (2707 - 1244) / 2707),
])
def test_working_capital_days_and_what_is_paid_out_are_computed_from_their_rows(question, expected):
    asked = asked_metric(question)
    copied, _ = looked_up(asked, dated(stated_amounts(WORKING_ROWS), 2019))
    assert compute_metric(asked, copied).value == pytest.approx(expected, abs=0.006)


def test_a_cost_or_an_expense_named_after_sales_is_no_revenue():
    rows = stated_amounts("| Cost of sales | 11,108 | 10,305 |\n| Sales and marketing | 926 | 1,062 |\n"
                          "| Deferred revenues | 220 | 122 |\n| Revenue per available room | 153 | 147 |")
    assert row_amount(REVENUE, 2019, dated(rows, 2019)) is None
    total = stated_amounts("| Total net revenues | 6,489 | 7,500 |")
    assert row_amount(REVENUE, 2019, dated(total, 2019)).value == 6489


def test_a_table_row_set_as_a_record_gives_each_value_its_year():
    """answer.table_records sets a statement's row as "Name: 2022 = 65,984; 2021 = 67,044": the first
    value is keyed by its year too, not by the row's name."""
    rows = stated_amounts("Statements of Earnings (in millions)\nTotal net sales: 2022 = 65,984; 2021 = 67,044; "
                          "2020 = 65,398\nTotal cost of sales: 2022 = (57,697); 2021 = (57,983); 2020 = (56,744)")
    assert [(s.label.strip(), s.value, s.period) for s in rows][:3] == [
        ("Total net sales", 65984, 2022), ("Total net sales", 67044, 2021), ("Total net sales", 65398, 2020)]
    assert row_amount(REVENUE, 2022, rows).value == 65984


def test_a_cash_flow_statements_working_capital_lines_are_changes_not_balances():
    """"Inventories | 423" on a cash flow statement is the year's change: inventory turnover reads the
    balance sheet's line."""
    from stages.core.answer.analyst import read_rows
    cash_flows = ContextBlock("ACME_2020_10K", "Consolidated Statements of Cash Flows (cash flow statement) | "
                                               "Inventories | 2020: 423 | 2019: (298)")
    balance = ContextBlock("ACME_2020_10K", "Consolidated Balance Sheets (balance sheet) | Inventories, net | "
                                            "2020: 2,438 | 2019: 2,320")
    income = ContextBlock("ACME_2020_10K", "Consolidated Statements of Income (income statement) | Cost of sales | "
                                           "2020: 7,772 | 2019: 7,468")
    asked = asked_metric("What is the FY2020 inventory turnover ratio? Round your answer to two decimal places.")
    reading, _ = read_rows(asked, [cash_flows, balance, income])
    assert reading.value == f"{7772 / ((2438 + 2320) / 2):.2f}"


def test_a_wide_tables_column_set_as_a_record_gives_each_row_its_columns_year():
    """answer.table_records sets a wide table's column as "2022: Total revenue = 17,606; Operating income =
    6,098": each value is its row's, in that year; "Non-operating income" is no operating income."""
    rows = stated_amounts("2022: Total revenue = 17,606; Non-operating income (expense), net = (90)\n"
                          "2021: Total revenue = 15,785; Non-operating income (expense), net = 97")
    assert [(s.label, s.value, s.period) for s in rows][:2] == [("Total revenue", 17606, 2022),
                                                                ("Non-operating income (expense), net", 90, 2022)]
    assert row_amount(REVENUE, 2021, rows).value == 15785
    assert row_amount(OPERATING_INCOME, 2022, rows) is None


def test_debt_maturing_within_one_year_is_the_short_term_debt():
    rows = dated(stated_amounts("| Debt maturing within one year | 9,963 | 7,443 |\n| Long-term debt | 140,676 | 143,425 |"),
                 2022)
    asked = asked_metric("Has Verizon increased its debt on balance sheet between 2022 and the 2021 fiscal period?")
    copied, _ = looked_up(dataclasses.replace(asked, years=(2021, 2022)), rows)
    assert copied["short_term_debt_FY2022"] == 9963 and copied["long_term_debt_FY2021"] == 143425
