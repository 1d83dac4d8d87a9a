"""A financial statement in running text read as records: row label, period columns, the statement's title.

A filing's statements (income statement, balance sheet, cash flows) are seldom ruled: extraction gives
one text line per row, "Purchases of property, plant and equipment (PP&E) (1,577)  (1,373)  (1,420)",
under a title line (`rows.STATEMENT_TITLE`) and a period header "(Millions) 2018 2017 2016". Read
here, each row becomes a markdown row whose cells the period header names, so its row sentence
(`markdown.table_row_sentences`) says "Consolidated Statement of Cash Flows (Millions) | Purchases of
property, plant and equipment (PP&E) | 2018: (1,577) | 2017: (1,373) | 2016: (1,420)": the statement,
the line item and the period together in one retrievable unit.
"""
from __future__ import annotations

import re

from stages.core.tree.tables.rows import UNIT_JOIN

# a value cell: 1,577 / (1,577) / -3.2 / 12% / $5,363 (the "$" may stand apart), or a dash for none
_VALUE = re.compile(r"^\(?[-–]?\$?\d[\d,]*(?:\.\d+)?%?\)?%?$|^[—–-]$")
_YEAR = re.compile(r"^(?:19|20)\d\d$")
_DAY = re.compile(r"^\d{1,2},?$")
# the names a question gives a statement, by the words of its title (the first that matches names it)
KINDS = ((re.compile(r"cash\s+flow", re.I), "cash flow statement"),
         (re.compile(r"comprehensive", re.I), ""),
         (re.compile(r"operations|income|earnings", re.I), "income statement"),
         (re.compile(r"balance\s+sheet|financial\s+(?:position|condition)", re.I),
          "balance sheet, statement of financial position"))
HEAD_CHARS = 100  # of the header lines' words ("Years ended December 31 (Millions)") added to the caption


def _split(text: str) -> tuple[str, list[str]]:
    """(label, trailing values) of one line; a lone "$" before a value is dropped."""
    toks = [t for t in text.replace(UNIT_JOIN, " ").split() if t != "$"]
    i = len(toks)
    while i > 0 and _VALUE.match(toks[i - 1]):
        i -= 1
    return " ".join(toks[:i]), toks[i:]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").strip()


def header_lines(markdown: str) -> list[str]:
    """A header that extraction found as a ruled table, as text lines (one per markdown row)."""
    out = []
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.strip().startswith("|") and not all(re.fullmatch(r":?-{2,}:?", c) for c in cells if c):
            out.append(" ".join(c for c in cells if c))
    return [t for t in out if t]


def read_statement(texts: list[str], caption: str) -> str:
    """The markdown (caption first) of a statement's lines: the first line of years is the period
    header (it and the lines above it, "Years ended December 31" and "(Millions)", join the caption),
    the lines with values are rows (the caption also names the statement as questions do: "income
    statement" for "Statements of Operations"), a label line that the next line continues in lower case is a
    label wrapped, other label lines stay rows of their own (the statement's groups: "Cash Flows
    from Investing Activities")."""
    caption = re.sub(r"(?i)\b(flow)\s+s\b", r"\1s", caption)  # "Cash Flow s": a word a PDF font split
    kind = next((k for rx, k in KINDS if rx.search(caption)), "")
    caption = f"{caption} ({kind})" if kind else caption  # "Statements of Operations (income statement)"
    periods: list[str] = []
    rows: list[list[str]] = []
    before: list[str] = []  # header lines without years ("Years ended December 31", "(Millions)")
    pending = ""
    for text in texts:
        label, values = _split(text)
        if not rows and not pending and values and all(_YEAR.match(v) for v in values):
            periods += values  # the period header, on one line or spread over several ("2016" ... "2015")
            if label:
                before.append(label)
            continue
        if not rows and not pending and (not values or len(values) == 1 and _DAY.match(values[0])):
            if periods and not values:
                pending = label  # the header is over: a label above the first row
            else:
                before.append(text.strip())  # "December 2," a day of the period header, not a value
            continue
        if not values:
            if pending and label[:1].islower():
                pending = f"{pending} {label}"  # a label wrapped over two lines
                continue
            if pending:
                rows.append([pending])
            pending = label
            continue
        if pending and label[:1].islower():
            label, pending = f"{pending} {label}", ""
        elif pending:
            rows.append([pending])
            pending = ""
        rows.append([label, *values])
    if pending:
        rows.append([pending])
    if not periods:  # no period header: what stood above the rows is rows too
        rows = [[b] for b in before] + rows
        before = []
    head = " ".join(before)
    caption = f"{caption} {head[:HEAD_CHARS]}".strip()
    width = max([len(periods)] + [len(r) - 1 for r in rows])
    header = [""] + periods + [""] * (width - len(periods))
    lines = [caption, "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        values = r[1:]
        cells = [r[0]] + [""] * (width - len(values)) + values  # fewer values: the last columns hold them
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines)
