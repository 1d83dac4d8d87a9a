"""Financial metrics computed by code from line items the reader copies (answer.style analyst).

A 1.5B reader asked for "the quick ratio" or "the year-over-year change in revenue" copies one
number from a statement, or divides the wrong pair. Here code recognises the metric a question
names (`METRICS`: the textbook definitions, which are also how analysts' questions define them),
asks the reader for each line item the formula needs, by name and fiscal year ("revenue_FY2019",
"total_current_liabilities_FY2019"), then computes and rounds the value, and the explanation
names the formula with the operands filled in. Line items a statement prints in parentheses
(capital expenditure as an outflow) count by their size where the metric needs a size.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from stages.core.answer.line_items import asked_scale

_YEAR = re.compile(r"\b(?:FY|fiscal (?:year )?)\s?'?(\d{4}|\d{2})\b", re.IGNORECASE)
_PLAIN_YEAR = re.compile(r"\b(19\d{2}|20\d{2})\b")
_DECIMALS = re.compile(r"\bround(?:ed)? (?:your answer |the answer |it )?to (\w+) decimal", re.IGNORECASE)
_WORD_NUMBERS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4}
_N_YEAR_AVERAGE = re.compile(r"\b(\d|two|three|four|five)[- ]year average\b", re.IGNORECASE)
_CAGR = re.compile(r"\bCAGR\b|\bcompound(?:ed)? annual growth\b", re.IGNORECASE)
DEFAULT_DECIMALS = 2  # a ratio or percent as analysts write it when the question names no precision


@dataclass(frozen=True)
class Item:
    """A line item the formula needs: its field name stem, the words shown to the reader, whether it
    counts by its size (an outflow printed negative is still a positive capex), and ``names``: how
    statements name its line (a regex over the words that label a row, line_items.py). A copied
    operand is read only from a line so named. ``absent_is_zero``: a line some statements do not
    print at all (a company with no short-term investments), so 0 stands for it without a line."""

    key: str
    label: str
    names: str
    size: bool = True
    absent_is_zero: bool = False


REVENUE = Item("revenue", "total revenue (net sales)", r"\brevenues?\b|\bsales\b")
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
             r"\bcapital (?:expenditures?|spending)\b|\bproperty\b|\bequipment\b|\bPP&E\b|\bcapex\b")
NET_INCOME = Item("net_income", "net income",
                  r"\bnet (?:income|earnings|profit|loss)\b|\bearnings attributable\b", size=False)
OPERATING_INCOME = Item("operating_income", "operating income",
                        r"\boperating (?:income|profit|earnings|loss)\b|\b(?:income|earnings|profit) from operations\b",
                        size=False)
GROSS_PROFIT = Item("gross_profit", "gross profit", r"\bgross (?:profit|margin)\b", size=False)
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


# most specific wording first: "fixed asset turnover" before "asset turnover", "net working capital" (an
# amount) before "working capital ratio"
METRICS: tuple[Metric, ...] = (
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
           r"\b(?:capex|capital expenditures?)\b.{0,20}(?:%|percent|share|ratio) of (?:total )?(?:revenue|sales)\b",
           ((CAPEX, 0), (REVENUE, 0)), "capital_expenditure / revenue * 100", lambda v: v[0] / v[1] * 100,
           percent=True, plausible=(0.0, SHARE_OF_REVENUE[1])),
    _margin("gross margin", r"\bgross (?:profit )?(?:%\s*)?margin\b", GROSS_PROFIT),
    _margin("operating margin", r"\boperating (?:income |profit )?(?:%\s*)?margin\b", OPERATING_INCOME),
    _margin("net profit margin", r"\bnet (?:profit |income )?(?:%\s*)?margin\b|\bprofit margin\b", NET_INCOME),
    _margin("D&A margin", r"\b(?:D&A|depreciation and amortization)\b.{0,40}\bmargin\b", DA),
    Metric("revenue growth", r"\b(?:revenue|sales)\b.{0,30}\b(?:growth|change|CAGR)\b|\b(?:growth|change) in "
           r"(?:total |net )?(?:revenue|sales)\b", ((REVENUE, 0), (REVENUE, 1)),
           "(revenue - revenue of the year before) / revenue of the year before * 100",
           lambda v: (v[0] - v[1]) / v[1] * 100, percent=True, plausible=GROWTH),
)


@dataclass(frozen=True)
class Asked:
    """A metric a question asks for: the metric, the fiscal years it is computed for (one, or several
    averaged: "3 year average"), and the decimals of the answer."""

    metric: Metric
    years: tuple[int, ...]
    decimals: int
    average: bool = True  # several years: their average (False: each year's value, the last one answers)
    unit: tuple[float, str] | None = None  # an amount's unit the question asks for (line_items.asked_scale)

    def fields(self) -> list[tuple[str, str]]:
        """(field name, what to copy) for every operand of every year, without repeats."""
        out: dict[str, str] = {}
        for y in self.years:
            for item, back in self.metric.operands:
                out[field_name(item, y - back)] = f"{item.label}, FY{y - back}"
        return list(out.items())


def field_name(item: Item, year: int) -> str:
    return f"{item.key}_FY{year}"


def fiscal_years(question: str) -> list[int]:
    """The fiscal years a question names ("FY2019", "fiscal 2020", "2021"), in order, four digits."""
    years = [int(y) if len(y) == 4 else 2000 + int(y) for y in _YEAR.findall(question)]
    return years or [int(y) for y in _PLAIN_YEAR.findall(question)]


def _decimals(question: str) -> int:
    m = _DECIMALS.search(question)
    if not m:
        return DEFAULT_DECIMALS
    word = m.group(1).lower()
    return int(word) if word.isdigit() else _WORD_NUMBERS.get(word, DEFAULT_DECIMALS)


def asked_metric(question: str) -> Asked | None:
    """The metric a question asks for, with its years and decimals; None when it names none of
    METRICS or no fiscal year (the operands could not be named)."""
    metric = next((m for m in METRICS if re.search(m.pattern, question, re.IGNORECASE)), None)
    years = fiscal_years(question)
    if metric is None or not years:
        return None
    last = max(years)
    if _CAGR.search(question) and last > min(years):  # compound growth over the years between the two named
        n = last - min(years)
        cagr = Metric(f"{n} year revenue CAGR", _CAGR.pattern, ((REVENUE, 0), (REVENUE, n)),
                      f"((revenue / revenue {n} years before) ^ (1/{n}) - 1) * 100",
                      lambda v: ((v[0] / v[1]) ** (1 / n) - 1) * 100, percent=True, plausible=GROWTH)
        return Asked(cagr, (last,), _decimals(question), unit=asked_scale(question))
    span = _N_YEAR_AVERAGE.search(question)
    if span:  # an average of the metric over the n years ending with the last one named
        n = span.group(1).lower()
        count = int(n) if n.isdigit() else {"two": 2, "three": 3, "four": 4, "five": 5}[n]
        chosen = tuple(range(last - count + 1, last + 1))
    elif metric.name == "revenue growth" and len(set(years)) == 2 and max(years) - min(years) > 1:
        return None  # growth over several years (a CAGR) is not a one-year change
    else:
        chosen = (last,)
    return Asked(metric, chosen, _decimals(question), unit=asked_scale(question))


@dataclass(frozen=True)
class Computed:
    """A metric's value, rounded, and the explanation that shows how."""

    value: float
    explanation: str
    per_year: tuple[tuple[int, float], ...] = ()
    plausible: bool = True  # every year's value within the metric's plausible bounds (Metric.plausible)


def compute_metric(asked: Asked, copied: Values) -> Computed | None:
    """The metric from the copied line items, or None when one is missing or a denominator is zero."""
    metric = asked.metric
    per_year, shown = [], []
    for y in asked.years:
        vals = []
        for item, back in metric.operands:
            x = copied.get(field_name(item, y - back))
            if x is None or not math.isfinite(x):
                return None
            vals.append(abs(x) if item.size else x)
        try:
            v = metric.value(vals)
        except ZeroDivisionError:
            return None
        if not math.isfinite(v):
            return None
        per_year.append(v)
        shown.append(", ".join(f"{field_name(i, y - b)} = {x:g}" for (i, b), x in zip(metric.operands, vals,
                                                                                       strict=True)))
    value = round(sum(per_year) / len(per_year) if asked.average else per_year[-1], asked.decimals)
    unit = "%" if metric.percent else ""
    how = f"{metric.name} = {metric.formula}"
    each_year = tuple((y, round(v, asked.decimals)) for y, v in zip(asked.years, per_year, strict=True))
    low, high = metric.plausible
    sane = all(low < v < high for v in per_year)
    if not asked.average:
        values = ", ".join(f"FY{y} {v:.{asked.decimals}f}{unit}" for y, v in each_year)
        return Computed(value, f"{how}: {values} (with {'; '.join(shown)})", each_year, sane)
    if len(asked.years) > 1:
        each = "; ".join(f"FY{y}: {v:.{asked.decimals + 1}f}" for y, v in zip(asked.years, per_year, strict=True))
        how += f", averaged over FY{asked.years[0]}-FY{asked.years[-1]} ({each})"
    return Computed(value, f"{how}, with {'; '.join(shown)}: {value:.{asked.decimals}f}{unit}", each_year, sane)


def yes_no_metric(question: str) -> Asked | None:
    """The metric a yes/no question turns on ("positive working capital", "an improving operating margin"),
    for its year and the year before (a change shows in two); None when it names none."""
    asked = asked_metric(question)
    if asked is None or _CAGR.search(question):
        return None
    last = max(asked.years)
    return Asked(asked.metric, (last - 1, last), asked.decimals, average=False)
