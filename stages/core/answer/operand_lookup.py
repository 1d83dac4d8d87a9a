"""A metric's operands looked up by code on the statement rows of the context (answer.style analyst).

A statement row as the context sets it ("Total current liabilities | 2016: 577,464 | 2015: 334,202")
names its line item and the fiscal year of each value, so an operand a metric needs ("total current
liabilities, FY2016") can be read without the reader: the amount on a row whose label names the item
(plan.metrics.Item.names) in the column of that year. Among such rows the one whose label has the
fewest words the item's own label lacks is taken ("Total net sales" over "Cost of sales" for revenue;
"Net cash provided by operating activities" over "Changes in operating activities"), then the one that
lacks fewest of the item's words ("Property, plant and equipment - net" over the gross line); a label with
more than MAX_EXTRA_WORDS such words names another line. The operand stays unknown (the reader is
asked) when the closest rows state different amounts (a quarter's and a year's column of the same
year), when a balance is the one at the beginning of the period (the year before's), or when the
operands' tables state different scales.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from stages.core.answer.line_items import Stated
from stages.core.answer.metrics import Asked, field_name
from stages.core.plan.metrics import INVENTORY, MAX_EXTRA_WORDS, PAYABLES, RECEIVABLES, Item, extra_words, stems

_WORDS = re.compile(r"[a-z]+")
# a balance "at beginning of period" in a year's column is the year before's closing balance
_OPENING = re.compile(r"\bbeginning\b|\bopening\b", re.IGNORECASE)


def own_words(label: str) -> str:
    """A row's own words: those after the last colon of a label its column header or section leads
    ("Cash flows from operating activities:: Net cash provided by financing activities" names financing; the
    words after a cash flow section's heading run into them, "Investing Activities Purchases of equipment"),
    without the owners a total belongs to ("Net income attributable to shareowners of Acme", "Net earnings
    including noncontrolling interests": the company's net income); the part that belongs to the
    noncontrolling interests alone is another line (`_MINORITY_PART`)."""
    own = label.rsplit(":", 1)[-1]
    own = own if _WORDS.search(own.lower()) else label
    after = _SECTION.split(own)[-1]  # "Investing Activities Purchases of land, buildings, and equipment"
    own = after if _WORDS.search(after.lower()) else own
    return _OWNERS.sub("", own) if not _MINORITY_PART.search(own) else own


# a cash flow statement's section heading run into its first line's name when the statement is set as text
_SECTION = re.compile(r"\b(?i:activities)\b(?=\s+[A-Z])")


# whose share of a total a row states: the company's owners' (its total), or the minority's part alone
_OWNERS = re.compile(r"\b(?:attributable|available) to\b.*|\bincluding (?:non-?controlling|minority) interests?\b.*",
                     re.IGNORECASE)
_MINORITY_PART = re.compile(r"\b(?:attributable|available) to (?:the )?(?:non-?controlling|minority)\b", re.IGNORECASE)


def row_amount(item: Item, year: int, stated: Sequence[Stated]) -> Stated | None:
    """The amount of ``item`` in the column of fiscal ``year`` (see the module's docstring), or None."""
    pattern = re.compile(item.names, re.IGNORECASE)
    rows = [(s, own) for s in stated if s.period == year and not _OPENING.search(s.label)
            and not _MINORITY_PART.search(s.label) and pattern.search(own := own_words(s.label))]
    if not rows:
        return None
    extra = [extra_words(own, item) for _, own in rows]
    best = min(extra)
    if best > MAX_EXTRA_WORDS:
        return None
    closest = [(s, own) for (s, own), e in zip(rows, extra, strict=True) if e == best]
    missing = [len(stems(item.label) - stems(own)) for _, own in closest]  # "net" PP&E over the gross line
    closest = [(s, own) for (s, own), m in zip(closest, missing, strict=True) if m == min(missing)]
    if len({(s.value, s.negative, s.scale) for s, _ in closest}) > 1:
        return None
    return closest[0][0]


def dated(stated: Sequence[Stated], first_year: int | None) -> list[Stated]:
    """The amounts of an annual report whose fiscal year is ``first_year`` (None: not one), with a
    statement row's unkeyed period columns read as that year and the years before it, in order: an
    annual report states its own year first ("Total revenue | 12,000 | 11,000" is FY, FY - 1)."""
    if first_year is None:
        return list(stated)
    return [replace(s, period=first_year - s.column) if s.period is None and s.column is not None else s
            for s in stated]


def in_document_scale(stated: Sequence[Stated], scales: set[float]) -> list[Stated]:
    """A statement row's amounts (those with a year) in the one unit their document's tables state in the
    context (``scales``), where their own table does not say it: a statement's "(In thousands)" heads its
    page, not each row. As they were when the document states several units, or none."""
    if len(scales) != 1:
        return list(stated)
    only = next(iter(scales))
    return [replace(s, scale=only) if s.scale is None and s.period is not None else s for s in stated]


def looked_up(asked: Asked, stated: Sequence[Stated]) -> tuple[dict[str, float], list[Stated]] | None:
    """Every operand of the asked metric found on its row (`row_amount`), as the reader's copied fields
    (a parenthesised amount negative), with the rows read; None when one is not found or the rows'
    scales differ. An item statements may leave out (Item.absent_is_zero) is 0 when no row names it."""
    copied: dict[str, float] = {}
    rows: list[Stated] = []
    for y in asked.years:
        for item, back in asked.metric.operands:
            name = field_name(item, y - back)
            if name in copied:
                continue
            found = row_amount(item, y - back, stated)
            if found is None and item.absent_is_zero and not any(re.search(item.names, s.label, re.IGNORECASE)
                                                                 for s in stated):
                copied[name] = 0.0
                continue
            if found is None:
                return None
            copied[name] = -found.value if found.negative else found.value
            rows.append(found)
    if len({s.scale for s in rows}) > 1:
        return None
    return copied, rows


# a working-capital balance's line on a cash flow statement ("Inventories | 423 | (298)") states its change
# in the year, not the balance; the statement's tag comes from tree.tables.statements
_CASH_FLOW_TAG = re.compile(r"\(cash flow statement\)")
_CHANGES = re.compile("|".join(f"(?:{i.names})" for i in (INVENTORY, RECEIVABLES, PAYABLES)), re.IGNORECASE)


def balances_only(stated: Sequence[Stated], text: str) -> list[Stated]:
    """A unit's amounts without the working-capital lines of a cash flow statement (their changes)."""
    if not _CASH_FLOW_TAG.search(text):
        return list(stated)
    return [s for s in stated if not _CHANGES.search(own_words(s.label))]
