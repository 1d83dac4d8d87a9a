"""The financial metrics analysts' questions name, and the line items each is computed from.

A question that asks for "the quick ratio" or "the year-over-year change in revenue" names a metric
(`METRICS`: the textbook definitions, which are also how analysts' questions define them) whose
operands are line items of the statements (`Item`: how statements name each line). Retrieval looks
for those lines on the statement pages (retrieve.search.statement_lead, by `operand_names`); the
analyst reader asks for each by name and fiscal year and computes the metric by code
(answer.metrics).
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

@dataclass(frozen=True)
class Item:
    """A line item the formula needs: its field name stem, the words shown to the reader, whether it
    counts by its size (an outflow printed negative is still a positive capex), and ``names``: how
    statements name its line (a regex over the words that label a row, answer.line_items). A copied
    operand is read only from a line so named. ``absent_is_zero``: a line some statements do not
    print at all (a company with no short-term investments), so 0 stands for it without a line."""

    key: str
    label: str
    names: str
    size: bool = True
    absent_is_zero: bool = False


# a row's label with more words the item's own label lacks names another line ("Accounts receivable, net of
# allowance" is still the receivables line; four more words are another): answer.operand_lookup, retrieve.table_trim
MAX_EXTRA_WORDS = 3
_WORDS = re.compile(r"[a-z]+")
# words that tell no line from another: "Total", "and", "of", ... and the items' own asides
_NEUTRAL = frozenset("total and of the in by for from to at on or as its our a an".split())


def stems(text: str) -> set[str]:
    """A label's words that tell lines apart, without a plural "s" ("Total net revenues": net, revenue)."""
    return {w[:-1] if w.endswith("s") and len(w) > 3 else w for w in _WORDS.findall(text.lower())} - _NEUTRAL


def extra_words(label: str, item: Item) -> int:
    """How many words of a row's label the item's own label does not have."""
    return len(stems(label) - stems(item.label))

# a cost, an expense or a balance named after sales is no revenue line ("Cost of sales", "Sales and marketing",
# "Deferred revenue", "Revenue per available room")
REVENUE = Item("revenue", "total revenue (net sales)",
               r"^(?!.*\b(?:costs? of|deferred|unearned|marketing|expenses?|per)\b).*(?:\brevenues?\b|\bsales\b)")
COGS = Item("cost_of_goods_sold", "cost of goods sold (cost of sales / cost of revenue)",
            r"\bcosts? of (?:goods |products )?(?:sold|sales|revenues?)\b|\bcost of goods\b")
INVENTORY = Item("inventory", "inventories", r"\binventor(?:y|ies)\b")
PAYABLES = Item("accounts_payable", "accounts payable", r"\bpayables?\b")
PPE = Item("net_ppe", "property, plant and equipment, net",
           r"\bproperty(?:,)?(?: plant)?(?:,)? (?:and|&) equipment\b|\bPP&E\b|\bfixed assets\b")
ASSETS = Item("total_assets", "total assets", r"\btotal assets\b")
CURRENT_ASSETS = Item("total_current_assets", "total current assets", r"(?<!other )\bcurrent assets\b")
CURRENT_LIABILITIES = Item("total_current_liabilities", "total current liabilities",
                           r"(?<!other )\bcurrent liabilities\b")
CASH = Item("cash", "cash and cash equivalents", r"\bcash\b")
SHORT_INVESTMENTS = Item("short_term_investments", "short-term investments (marketable securities)",
                         r"\bshort[- ]term investments?\b|\bmarketable securities\b", absent_is_zero=True)
RECEIVABLES = Item("receivables", "accounts receivable, net", r"\breceivables?\b")
CFO = Item("operating_cash_flow", "net cash provided by operating activities",
           r"\boperating activities\b|\bfrom operations\b|\boperating cash flows?\b", size=False)
CAPEX = Item("capital_expenditure", "purchases of property, plant and equipment (capital expenditure)",
             # money in from selling assets is no capex, nor are the revenue and cost of selling equipment or
             # its depreciation
             r"^(?!.*\b(?:proceeds|dispos(?:als?|itions?)|sales?|revenues?|costs? of|depreciation|amortization)\b)"
             r".*(?:\bcapital (?:expenditures?|spending)\b|\bproperty\b|\bequipment\b|\bPP&E\b|\bcapex\b)")
# the bottom line: net income from continuing operations is a part of it, without the discontinued ones
NET_INCOME = Item("net_income", "net income", r"^(?!.*\bcontinuing operations\b)"
                  r".*(?:\bnet (?:income|earnings|profit|loss)\b|\bearnings attributable\b)", size=False)
OPERATING_INCOME = Item("operating_income", "operating income",
                        r"(?<!non-)(?<!non )\boperating (?:income|profit|earnings|loss)\b|"
                        r"\b(?:income|earnings|profit) from operations\b",
                        size=False)
GROSS_PROFIT = Item("gross_profit", "gross profit", r"\bgross (?:profit|margin)\b", size=False)
LONG_DEBT = Item("long_term_debt", "long-term debt (non-current)",
                 r"(?<!portion of )\blong[- ]term (?:debt|borrowings)\b")
SHORT_DEBT = Item("short_term_debt",
                  "short-term debt and current portion of long-term debt (debt maturing within one year)",
                  r"\bshort[- ]term (?:debt|borrowings)\b|\bcurrent portion of long[- ]term (?:debt|borrowings)\b|"
                  r"\bcommercial paper\b|\bdebt (?:due|maturing) within one year\b", absent_is_zero=True)
INCOME_TAX = Item("income_tax_expense", "provision for income taxes (income tax expense)",
                  r"(?<!before )\bprovision for income taxes\b|\bincome tax (?:expense|provision)\b|"
                  r"(?<!before )(?<!before provision for )\bincome taxes\b", size=False)
PRETAX_INCOME = Item("pretax_income", "income before income taxes",
                     r"\b(?:income|earnings|profit) (?:\(loss\) )?before (?:provision for )?income taxes\b", size=False)
DIVIDENDS = Item("dividends_paid", "cash dividends paid", r"\bdividends?\b(?!.*\bper\b)")  # not "... per share"
DA = Item("depreciation_and_amortization", "depreciation and amortization (cash flow statement)",
          r"\bdepreciation\b|\bamortization\b")

Values = Mapping[str, float]
# (item, years back from the year the question asks about): 0 = that year, 1 = the year before
Operand = tuple[Item, int]


@dataclass(frozen=True)
class Metric:
    """A named metric: the wording that names it, its operands and formula, and whether it is a percent."""

    name: str
    pattern: str
    operands: tuple[Operand, ...]
    formula: str  # as the explanation writes it, over the operand names
    value: Callable[[Sequence[float]], float]  # the operands' values in `operands` order
    percent: bool = False
    amount: bool = False  # an amount in the statements' own units (millions), not a ratio
    plausible: tuple[float, float] = (-math.inf, math.inf)  # open bounds of a value a company can report


# Plausible values, open bounds: a value outside them comes from misread operands (a percentage copied as an
# amount, another row, a placeholder), not from a company, so it is refused rather than answered.
# A profit or cost as a share of revenue: beyond +-100% a company earns or spends more than it sells.
SHARE_OF_REVENUE = (-100.0, 100.0)
# Turnovers and days are positive; a turnover in the hundreds means an asset base read as a tiny number.
TURNOVER = (0.0, 500.0)
# Suppliers are paid within months: payables outstanding for two years are not trade credit.
DAYS = (0.0, 730.0)
# Liquidity ratios: current items against current liabilities; fifty times over is a misread denominator.
LIQUIDITY = (0.0, 50.0)
# A year's growth: revenue cannot fall by more than all of it, and six times last year's is a misread year.
GROWTH = (-100.0, 500.0)


def _avg(a: float, b: float) -> float:
    return (a + b) / 2


def _margin(name: str, pattern: str, item: Item) -> Metric:
    return Metric(name, pattern, ((item, 0), (REVENUE, 0)), f"{item.key} / revenue * 100",
                  lambda v: v[0] / v[1] * 100, percent=True, plausible=SHARE_OF_REVENUE)


# A change in a tax rate, in percentage points: a rate beyond +-100 points apart is a misread line.
RATE_CHANGE = (-100.0, 100.0)
# A change in a profit: it may turn from a loss, so beyond +-1000% is a misread year or scale.
PROFIT_CHANGE = (-1000.0, 1000.0)


def _change(name: str, item: Item) -> Metric:
    """The year-over-year change in a line item, in percent ("the change in operating income from FY2015
    to FY2016")."""
    words = name.replace(" ", r"\s+")
    return Metric(f"{name} growth", rf"\b(?:change|growth|increase|decrease) in (?:\w+ )?{words}\b|\b{words}\b.{{0,20}}"
                  r"\b(?:growth|change)\b", ((item, 0), (item, 1)),
                  f"({item.key} - {item.key} of the year before) / |{item.key} of the year before| * 100",
                  lambda v: (v[0] - v[1]) / abs(v[1]) * 100, percent=True, plausible=PROFIT_CHANGE)


# most specific wording first: "fixed asset turnover" before "asset turnover", "net working capital" (an
# amount) before "working capital ratio"
METRICS: tuple[Metric, ...] = (
    Metric("cash conversion cycle", r"\bcash conversion cycle\b|\bCCC\b",
           ((INVENTORY, 0), (INVENTORY, 1), (COGS, 0), (RECEIVABLES, 0), (RECEIVABLES, 1), (REVENUE, 0),
            (PAYABLES, 0), (PAYABLES, 1)),
           "DIO + DSO - DPO = 365 * average inventory / cost_of_goods_sold + 365 * average receivables / revenue"
           " - 365 * average accounts_payable / (cost_of_goods_sold + change in inventory)",
           lambda v: 365 * (_avg(v[0], v[1]) / v[2] + _avg(v[3], v[4]) / v[5]
                            - _avg(v[6], v[7]) / (v[2] + v[0] - v[1])),
           plausible=(-DAYS[1], DAYS[1])),
    Metric("days sales outstanding", r"\bdays (?:of )?sales outstanding\b|\bDSO\b",
           ((RECEIVABLES, 0), (RECEIVABLES, 1), (REVENUE, 0)), "365 * average receivables / revenue",
           lambda v: 365 * _avg(v[0], v[1]) / v[2], plausible=DAYS),
    Metric("days inventory outstanding", r"\bdays (?:of )?inventory (?:outstanding|on hand)\b|\bDIO\b",
           ((INVENTORY, 0), (INVENTORY, 1), (COGS, 0)), "365 * average inventory / cost_of_goods_sold",
           lambda v: 365 * _avg(v[0], v[1]) / v[2], plausible=DAYS),
    Metric("dividend payout ratio", r"\b(?:dividend )?payout ratio\b", ((DIVIDENDS, 0), (NET_INCOME, 0)),
           "dividends_paid / net_income", lambda v: v[0] / v[1], plausible=(-10.0, 10.0)),
    Metric("retention ratio", r"\b(?:earnings )?retention ratio\b|\bplowback ratio\b",
           ((DIVIDENDS, 0), (NET_INCOME, 0)),
           "(net_income - dividends_paid) / net_income", lambda v: (v[1] - v[0]) / v[1], plausible=(-10.0, 10.0)),
    Metric("days payable outstanding", r"\bdays payable outstanding\b|\bDPO\b",
           ((PAYABLES, 0), (PAYABLES, 1), (COGS, 0), (INVENTORY, 0), (INVENTORY, 1)),
           "365 * average accounts_payable / (cost_of_goods_sold + change in inventory)",
           lambda v: 365 * _avg(v[0], v[1]) / (v[2] + v[3] - v[4]), plausible=DAYS),
    Metric("inventory turnover", r"\binventory turnover\b", ((COGS, 0), (INVENTORY, 0), (INVENTORY, 1)),
           "cost_of_goods_sold / average inventory", lambda v: v[0] / _avg(v[1], v[2]),
           plausible=TURNOVER),
    Metric("fixed asset turnover", r"\bfixed asset turnover\b", ((REVENUE, 0), (PPE, 0), (PPE, 1)),
           "revenue / average net_ppe", lambda v: v[0] / _avg(v[1], v[2]), plausible=TURNOVER),
    Metric("asset turnover", r"\basset turnover\b", ((REVENUE, 0), (ASSETS, 0), (ASSETS, 1)),
           "revenue / average total_assets", lambda v: v[0] / _avg(v[1], v[2]), plausible=TURNOVER),
    Metric("return on assets", r"\breturn on (?:total )?assets\b|\bROA\b", ((NET_INCOME, 0), (ASSETS, 0), (ASSETS, 1)),
           "net_income / average total_assets", lambda v: v[0] / _avg(v[1], v[2]),
           plausible=(-1.0, 1.0)),  # a fraction: a year's income beyond all its assets is a misread
    Metric("quick ratio", r"\bquick ratio\b|\bacid[- ]test\b",
           ((CASH, 0), (SHORT_INVESTMENTS, 0), (RECEIVABLES, 0), (CURRENT_LIABILITIES, 0)),
           "(cash + short_term_investments + receivables) / total_current_liabilities",
           lambda v: (v[0] + v[1] + v[2]) / v[3], plausible=LIQUIDITY),
    Metric("operating cash flow ratio", r"\boperating cash flow ratio\b", ((CFO, 0), (CURRENT_LIABILITIES, 0)),
           "operating_cash_flow / total_current_liabilities", lambda v: v[0] / v[1],
           plausible=(-LIQUIDITY[1], LIQUIDITY[1])),
    Metric("current ratio", r"\bcurrent ratio\b|\bworking capital ratio\b",
           ((CURRENT_ASSETS, 0), (CURRENT_LIABILITIES, 0)), "total_current_assets / total_current_liabilities",
           lambda v: v[0] / v[1], plausible=LIQUIDITY),
    Metric("working capital", r"\b(?:net )?working capital\b", ((CURRENT_ASSETS, 0), (CURRENT_LIABILITIES, 0)),
           "total_current_assets - total_current_liabilities", lambda v: v[0] - v[1], amount=True),
    Metric("free cash flow", r"\bfree cash ?flow\b|\bFCF\b", ((CFO, 0), (CAPEX, 0)),
           "operating_cash_flow - capital_expenditure", lambda v: v[0] - v[1], amount=True),
    Metric("capital expenditure as a share of revenue",
           r"\b(?:capex|capital expenditures?)\b.{0,20}(?:%|percent|share|ratio) of (?:total )?(?:revenue|sales)\b|"
           r"\bcapital[- ]intensi(?:ve|ty)\b",
           ((CAPEX, 0), (REVENUE, 0)), "capital_expenditure / revenue * 100", lambda v: v[0] / v[1] * 100,
           percent=True, plausible=(0.0, SHARE_OF_REVENUE[1])),
    Metric("EBITDA margin", r"\bEBITDA\b.{0,20}\bmargin\b",
           ((OPERATING_INCOME, 0), (DA, 0), (REVENUE, 0)),
           "(operating_income + depreciation_and_amortization) / revenue * 100",
           lambda v: (v[0] + v[1]) / v[2] * 100, percent=True, plausible=SHARE_OF_REVENUE),
    _margin("cost of goods sold as a share of revenue",
            r"\b(?:COGS|costs? of (?:goods sold|sales|revenues?))\b.{0,20}(?:%|percent|share|ratio) of (?:total )?"
            r"(?:revenue|sales)\b", COGS),
    _margin("gross margin", r"\bgross (?:profit )?(?:%\s*)?margin\b", GROSS_PROFIT),
    _margin("operating margin", r"\boperating (?:income |profit )?(?:%\s*)?margin\b", OPERATING_INCOME),
    _margin("net profit margin", r"\bnet (?:profit |income )?(?:%\s*)?margin\b|\bprofit margin\b", NET_INCOME),
    _margin("D&A margin", r"\b(?:D&A|depreciation and amortization)\b.{0,40}\bmargin\b", DA),
    Metric("effective tax rate change", r"\beffective tax rate\b.{0,60}\b(?:chang|increas|decreas)|"
           r"\b(?:change|increase|decrease) in (?:the )?effective tax rate\b",
           ((INCOME_TAX, 0), (PRETAX_INCOME, 0), (INCOME_TAX, 1), (PRETAX_INCOME, 1)),
           "(income_tax_expense / pretax_income - the same of the year before) * 100 (percentage points)",
           lambda v: (v[0] / v[1] - v[2] / v[3]) * 100, percent=True, plausible=RATE_CHANGE),
    Metric("total debt", r"\bdebt on (?:the |its )?balance sheet\b|\btotal debt\b|"
           r"\b(?:increased|decreased|reduced|raised) (?:its |their )?(?:total )?debt\b",
           ((LONG_DEBT, 0), (SHORT_DEBT, 0)), "long_term_debt + short_term_debt", lambda v: v[0] + v[1], amount=True),
    _change("operating income", OPERATING_INCOME),
    _change("net income", NET_INCOME),
    Metric("revenue growth", r"\b(?:revenue|sales)\b.{0,30}\b(?:growth|change|CAGR)\b|\b(?:growth|change) in "
           r"(?:total |net )?(?:revenue|sales)\b", ((REVENUE, 0), (REVENUE, 1)),
           "(revenue - revenue of the year before) / revenue of the year before * 100",
           lambda v: (v[0] - v[1]) / v[1] * 100, percent=True, plausible=GROWTH),
)


def _amount(name: str, pattern: str, item: Item) -> Metric:
    return Metric(name, pattern, ((item, 0),), item.key, lambda v: v[0], amount=True)


# A line item's own amount ("the FY2018 capital expenditure amount", "year end FY2018 net PPNE"), looked up
# as a metric's operand is: its row, in its year's column (answer.metrics.asked_amount; a sum of several items
# is asked as a metric, asked_metric). Named only by a question that asks an amount in a scale ("in USD
# millions") and none of METRICS: an item's name alone is in too many questions. Most specific wording first.
AMOUNTS: tuple[Metric, ...] = (
    Metric("EBITDA", r"\bEBITDA\b", ((OPERATING_INCOME, 0), (DA, 0)),
           "operating_income + depreciation_and_amortization", lambda v: v[0] + v[1], amount=True),
    _amount("capital expenditure", r"\bcapital expenditures?\b|\bcapex\b", CAPEX),
    _amount("net PP&E", r"\bPP&?N?E\b|\bproperty,? plant,? (?:and|&) equipment\b|\bfixed assets\b", PPE),
    _amount("accounts payable", r"\baccounts payable\b", PAYABLES),
    _amount("cost of goods sold", r"\bCOGS\b|\bcosts? of (?:goods sold|sales|revenues?)\b", COGS),
    _amount("total current assets", CURRENT_ASSETS.names, CURRENT_ASSETS),
    _amount("total current liabilities", CURRENT_LIABILITIES.names, CURRENT_LIABILITIES),
    _amount("total assets", r"\btotal assets\b", ASSETS),
    _amount("operating cash flow", r"\bcash (?:flows? )?(?:from|provided by) operat\w*|\boperating cash flows?\b", CFO),
    _amount("operating income", r"\boperating (?:income|profit)\b", OPERATING_INCOME),
    _amount("gross profit", r"\bgross profit\b", GROSS_PROFIT),
    _amount("net income", r"\bnet (?:income|earnings|profit)\b", NET_INCOME),
    _amount("inventory", INVENTORY.names, INVENTORY),
    _amount("revenue", r"\b(?:total |net )?revenues?\b|\bnet sales\b", REVENUE),
)


def named_amount(question: str) -> Metric | None:
    """The first of AMOUNTS a question names, or None."""
    return next((m for m in AMOUNTS if re.search(m.pattern, question, re.IGNORECASE)), None)


def named_metric(question: str) -> Metric | None:
    """The first of METRICS (most specific wording first) a question names, or None."""
    return next((m for m in METRICS if re.search(m.pattern, question, re.IGNORECASE)), None)


def operand_items(question: str) -> list[Item]:
    """The line items the metric (or amount) a question names is computed from, each once; [] for none."""
    metric = named_metric(question) or named_amount(question)
    return list(dict.fromkeys(item for item, _ in metric.operands)) if metric else []


def operand_names(question: str) -> list[str]:
    """The names statements give each line item the metric a question names is computed from ("quick
    ratio": "cash and cash equivalents", "short-term investments marketable securities", "accounts
    receivable, net", "total current liabilities"), each item once, as words to search rows by; [] when it
    names none. A metric's name is seldom a row of a statement, its operands are; a line item asked by a
    name statements do not print ("capex", "COGS", AMOUNTS) is searched by its line's names too."""
    return list(dict.fromkeys(" ".join(_PUNCT.sub(" ", item.label).split()) for item in operand_items(question)))


_PUNCT = re.compile(r"[()/]")  # a label's aside is other names of its line: "(cost of sales / cost of revenue)"
