"""A metric's operands looked up by code on the statement rows of the context (answer.style analyst).

A statement row as the context sets it ("Total current liabilities | 2016: 577,464 | 2015: 334,202")
names its line item and the fiscal year of each value, so an operand a metric needs ("total current
liabilities, FY2016") can be read without the reader: the amount on a row whose label names the item
(plan.metrics.Item.names) in the column of that year. Among such rows the one whose label has the
fewest words the item's own label lacks is taken ("Total net sales" over "Cost of sales" for revenue;
"Net cash provided by operating activities" over "Changes in operating activities"); a label with
more than MAX_EXTRA_WORDS such words names another line. The operand stays unknown (the reader is
asked) when the closest rows state different amounts (a quarter's and a year's column of the same
year), when a balance is the one at the beginning of the period (the year before's), or when the
operands' tables state different scales.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from stages.core.answer.line_items import Stated
from stages.core.answer.metrics import Asked, field_name
from stages.core.plan.metrics import Item

MAX_EXTRA_WORDS = 3  # "Accounts receivable, net of allowance" is still the receivables line; four more words are another
_WORDS = re.compile(r"[a-z]+")
# words that tell no line from another: "Total", "and", "of", ... and the items' own asides
_NEUTRAL = frozenset("total and of the in by for from to at on or as its our a an".split())
# a balance "at beginning of period" in a year's column is the year before's closing balance
_OPENING = re.compile(r"\bbeginning\b|\bopening\b", re.IGNORECASE)


def _stems(text: str) -> set[str]:
    return {w[:-1] if w.endswith("s") and len(w) > 3 else w for w in _WORDS.findall(text.lower())} - _NEUTRAL


def extra_words(label: str, item: Item) -> int:
    """How many words of a row's label the item's own label does not have."""
    return len(_stems(label) - _stems(item.label))


def row_amount(item: Item, year: int, stated: Sequence[Stated]) -> Stated | None:
    """The amount of ``item`` in the column of fiscal ``year`` (see the module's docstring), or None."""
    pattern = re.compile(item.names, re.IGNORECASE)
    rows = [s for s in stated if s.period == year and pattern.search(s.label) and not _OPENING.search(s.label)]
    if not rows:
        return None
    extra = [extra_words(s.label, item) for s in rows]
    best = min(extra)
    if best > MAX_EXTRA_WORDS:
        return None
    closest = [s for s, e in zip(rows, extra, strict=True) if e == best]
    if len({(s.value, s.negative, s.scale) for s in closest}) > 1:
        return None
    return closest[0]


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
