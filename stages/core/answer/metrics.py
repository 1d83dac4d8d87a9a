"""Financial metrics computed by code from line items the reader copies (answer.style analyst).

A 1.5B reader asked for "the quick ratio" or "the year-over-year change in revenue" copies one
number from a statement, or divides the wrong pair. Here code recognises the metric a question
names (plan.metrics: the metrics and the line items they are computed from), asks the reader for
each line item the formula needs, by name and fiscal year ("revenue_FY2019",
"total_current_liabilities_FY2019"), then computes and rounds the value, and the explanation
names the formula with the operands filled in. Line items a statement prints in parentheses
(capital expenditure as an outflow) count by their size where the metric needs a size.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from stages.core.answer.line_items import asked_scale
from stages.core.plan.metrics import GROWTH, REVENUE, Item, Metric, Values, named_amount, named_metric

_YEAR = re.compile(r"\b(?:FY|fiscal (?:year )?)\s?'?(\d{4}|\d{2})\b", re.IGNORECASE)
_PLAIN_YEAR = re.compile(r"\b(19\d{2}|20\d{2})\b")
_DECIMALS = re.compile(r"\bround(?:ed)? (?:your answer |the answer |it )?to (\w+) decimal", re.IGNORECASE)
_WORD_NUMBERS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4}
_N_YEAR_AVERAGE = re.compile(r"\b(\d|two|three|four|five)[- ]year average\b", re.IGNORECASE)
_CAGR = re.compile(r"\bCAGR\b|\bcompound(?:ed)? annual growth\b", re.IGNORECASE)
DEFAULT_DECIMALS = 2  # a ratio or percent as analysts write it when the question names no precision


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
    plan.metrics.METRICS or no fiscal year (the operands could not be named). An amount computed from
    several line items (plan.metrics.AMOUNTS: "unadjusted EBITDA ... in USD millions") is one too."""
    amount = named_amount(question) if asked_scale(question) else None
    metric = named_metric(question) or (amount if amount is not None and len(amount.operands) > 1 else None)
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


def asked_amount(question: str) -> Asked | None:
    """A line item's amount a question asks in a scale ("the FY2018 capital expenditure amount (in USD
    millions)", plan.metrics.AMOUNTS of one line item) for one fiscal year, or None (a metric's question, no
    scale, no year)."""
    amount = named_amount(question) if asked_scale(question) and named_metric(question) is None else None
    years = fiscal_years(question)
    if amount is None or len(amount.operands) > 1 or not years:
        return None
    return Asked(amount, (max(years),), _decimals(question), unit=asked_scale(question))


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


# what a yes/no question about a metric's change or sign asks ("Has X increased its debt ...?", "an improving
# operating margin", "positive working capital"); for a metric that is better lower (days, a cycle, debt),
# "improving" says no direction
_UP = re.compile(r"\b(?:increas\w*|grow(?:n|s|ing|th)?|grew|improv\w*|ris(?:e|en|es|ing)|rose|higher|expand\w*)\b",
                 re.IGNORECASE)
_DOWN = re.compile(r"\b(?:decreas\w*|declin\w*|reduc\w*|fall(?:s|en|ing)?|fell|lower(?:ed)?|shr[iu]nk\w*|"
                   r"deteriorat\w*)\b", re.IGNORECASE)
_BETTER_LOWER = re.compile(r"\bdays\b|\bcycle\b|\bdebt\b", re.IGNORECASE)
_SIGN = re.compile(r"\b(positive|negative)\b", re.IGNORECASE)
_YEAR_VALUE = re.compile(r"\bFY(\d{4}) (-?\d+(?:\.\d+)?)%?")


def per_year_values(fact: str) -> list[tuple[int, float]]:
    """The metric's value of each year in a computed fact (compute_metric's explanation of a change:
    "...: FY2022 49781.00, FY2023 47237.00 (with ...)"), in order; [] when it states none."""
    head = fact.split("(with", 1)[0]
    return [(int(y), float(v)) for y, v in _YEAR_VALUE.findall(head)]


def decided_yes(question: str, asked: Asked, per_year: list[tuple[int, float]]) -> bool | None:
    """The answer to a yes/no question about a metric's change or sign, decided by its computed values:
    "increased / grew / improving" is yes when the last year's value is above the year before's,
    "decreased / declined" when below, "positive" ("negative") when the last year's is above (below) zero;
    None when the question asks neither, asks both, or the values do not tell (equal, missing)."""
    if not per_year:
        return None
    last = per_year[-1][1]
    ups = {w.lower() for w in _UP.findall(question)}
    if _BETTER_LOWER.search(asked.metric.name) and all(w.startswith("improv") for w in ups):
        ups = set()  # "an improving cash conversion cycle" is a shorter one
    up, down = bool(ups), bool(_DOWN.search(question))
    if up != down and len(per_year) >= 2 and per_year[-2][1] != last:
        return last > per_year[-2][1] if up else last < per_year[-2][1]
    signs = {m.lower() for m in _SIGN.findall(question)}
    if len(signs) == 1 and not (up or down) and last != 0:
        return last > 0 if signs == {"positive"} else last < 0
    return None
