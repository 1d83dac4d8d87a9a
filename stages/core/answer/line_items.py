"""Which line of the context states a number, and in what scale (answer.style analyst).

A number copied from a financial statement is only read when it stands on the line that names
it: "accounts payable 34,616" states the payables, while the same digits in a row of receivables,
in a percentage ("grew 27%") or as a placeholder the reader typed ("1.0") do not. Here every
amount of a context unit gets its *label*, the words of its field before it (a field is a table
cell between "|" or ";" separators, a line, or a sentence of prose); a value cell with no words
of its own ("2017: 25,309") takes the label of the row it continues. Column keys ("2017:",
"2022 =") and percentages are no amounts.

The scale of an amount is the magnitude written after it ("$1.7 billion") or else the unit its
table states in its title ("(in millions, except per share data)"); None when neither is written
(statements are rarely in single dollars, so an unwritten scale is an unknown one).
"""
from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from stages.core.answer.grounding import MAGNITUDE_SUFFIXES, MAGNITUDE_WORDS
from stages.core.common.values import close
from stages.core.tree.tables import markdown_cells

# a field ends at a table separator, a line end, or a sentence end (a capital after ". ")
_FIELD_END = re.compile(r"\s*[|;]\s*|\n|(?<=[a-z)%][.!?])\s+(?=[A-Z(])")
_AMOUNT = re.compile(r"(?<![\w.])\(?[-−]?\$?\s?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\)?"
                     r"(?:\s*(thousand|million|billion|trillion|bn)s?\b|([kKMB])\b)?(\s*(?:%|percent|:|=))?")
_SUFFIXES = {**MAGNITUDE_SUFFIXES, "bn": 1e9}  # "$1.7 bn" too
# a table's stated unit: "(in millions, except ...)", "(In thousands)", "$ in millions", "in billions of dollars",
# "(Millions)"
_TABLE_SCALE = re.compile(r"\bin (thousands|millions|billions)\b|\((thousands|millions|billions)\b", re.IGNORECASE)
_LETTERS = re.compile(r"[A-Za-z]{2,}")
# the name of a table row set as a record (answer.table_records): "Name: key = value; key = value"
_RECORD_NAME = re.compile(r"^([^:|;=\n]*[A-Za-z][^:|;=\n]*):\s+(?=[^:|;=\n]{1,40}\s=\s)")
_NOTE_REF = re.compile(r"\(\s*Notes?\s*\|?\s*\d{1,2}[A-Z]?(?:\s*(?:,|and)\s*\d{1,2}[A-Z]?)*\s*\)", re.IGNORECASE)
# a value cell's column key: "2016: 577,464", "December 31, 2016: 577,464", "FY2019 = 1,200"
_COLUMN_KEY = re.compile(r"\s*([^:=]{1,60}?)\s*[:=]\s*(?=\(?[-$]?\s?\d)")
_KEY_YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2})(?!\d)")
# the words of a date or period: a key of only these is a column's period, not a line's name
_DATE_WORDS = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b\.?|\b(?:fiscal|years?|"
                         r"ended|ending|end|as|of|at|three|six|nine|twelve|months?|weeks?|quarter|fy|q[1-4])(?=\b|\d)",
                         re.IGNORECASE)
# the scale a question asks an amount in: "(in USD millions)", "in USD billion", "in millions of dollars"
_ASKED_SCALE = re.compile(r"\b(?:(?:USD|US\$|\$|dollars)\s*(thousand|million|billion)s?|(thousand|million|billion)s?"
                          r"\s+of\s+(?:USD|US\$|U\.S\. dollars|dollars)|in\s+(thousand|million|billion)s)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Stated:
    """An amount a context states: the words that label it, its digits as written, and its scale."""

    label: str
    value: float
    scale: float | None = None
    period: int | None = None  # the year its column key names ("2016: 577,464", "Dec. 31, 2016: ..."), else None
    negative: bool = False  # written in parentheses or after a minus sign: an outflow, a loss
    column: int | None = None  # its place among a statement row's 2-3 period columns with no key (`value_columns`)


def _magnitude(word: str | None) -> float | None:
    if not word:
        return None
    return MAGNITUDE_WORDS.get(word.lower()) or _SUFFIXES.get(word)


def stated_amounts(text: str) -> list[Stated]:
    """Every amount of a text with its label and scale (see the module's docstring)."""
    out: list[Stated] = []
    gaps: list[str] = []  # what stands before each amount of out since the amount before it
    t = unicodedata.normalize("NFKC", text).replace("−", "-")
    columns: list[int] = []  # the years of the markdown table's header row above, one per value column
    named_columns = False  # the markdown table's header names its columns with words: they are no periods
    scale: float | None = None
    for line in (row for ln in t.split("\n") for row in _column_record(ln)):
        line = _NOTE_REF.sub("", line)  # "Inventories, net (Note 6)": a note's number is no amount
        line = _without_markers(line)  # "| Total current assets | 7,453 | 3 | 7,659": a footnote's number either
        line = _RECORD_NAME.sub(r"\1 | ", line)  # a table row as a record: "Total net sales: 2022 = 65,984; ..."
        in_table = line.lstrip().startswith("|")
        if in_table and (years := header_years(line)):
            columns = years
            continue
        if in_table and not columns and not named_columns:
            named_columns = _named_header(line)
        if not in_table:
            columns, scale, named_columns = [], None, False  # a table's rows keep its title's scale, lines their own
        first = len(out)
        label = ""
        pos = 0
        for end in [*_FIELD_END.finditer(line), None]:
            field = line[pos:end.start() if end else len(line)]
            pos = end.end() if end else len(line)
            if m := _TABLE_SCALE.search(field):
                scale = _table_scale(m)
            key = _COLUMN_KEY.match(field)
            years = _KEY_YEAR.findall(key.group(1)) if key else []
            # a column key names a period ("2016:", "December 31, 2016:"): its numbers are no amounts, and
            # when it is only a date its words label nothing (the row's label does)
            start = key.end() if years and key and only_a_date(key.group(1)) else 0
            key_end = key.end() if years and key else 0
            prev, last = start, label
            run = len(out)  # where the amounts of the field's current label start
            for m in _AMOUNT.finditer(field):
                if m.group(5) or m.start(1) < key_end:  # a percentage, or a number of a column key
                    continue
                # the words since the field's previous amount label this one: a statement set as running
                # text ("Property and equipment, net 253 282 Goodwill 9,764 9,762 Total assets 19,845")
                # gives each line its own words, and a line's second column the first one's
                before = field[prev:m.start()]
                if _LETTERS.search(before):
                    last = before
                    if "|" not in line:
                        _running_columns(out, run, gaps)
                    run = len(out)
                prev = m.end()
                own = _magnitude(m.group(3) or m.group(4))
                value = float(m.group(1).replace(",", "") + (m.group(2) or ""))
                out.append(Stated(last, value, own or scale, int(years[-1]) if years else None,
                                  m.group(0).lstrip().startswith(("(", "-"))))
                gaps.append(before)
            if "|" not in line:
                _running_columns(out, run, gaps)
            if _LETTERS.search(field[start:]):
                label = field[start:]
        row = out[first:]
        if columns and len(row) == len(columns) and all(s.period is None for s in row):  # one value per year
            out[first:] = [replace(s, period=y) for s, y in zip(row, columns, strict=True)]
        elif not named_columns and (places := value_columns(line)) and len(row) >= len(places):
            tail = row[len(row) - len(places):]
            if all(s.period is None and s.label == tail[0].label for s in tail):
                out[len(out) - len(places):] = [replace(s, column=c) for s, c in zip(tail, places, strict=True)]
    return out


# a footnote marker set as a cell of its own: a bare number of one or two digits
_MARKER = re.compile(r"\s*\d{1,2}\s*")
_BIG_CELL = re.compile(r"\s*\$?\s*\(?\d{1,3}(?:,\d{3})+(?:\.\d+)?\)?\s*")  # "7,453", "$ (1,250)"


def _without_markers(line: str) -> str:
    """A table row without the footnote markers extraction set as cells of their own between its amounts:
    a bare one- or two-digit number between two amounts in the thousands ("| 7,453 | 3 | 7,659") is no
    column of the row (a year's amount a thousand times smaller than both its neighbours' is a marker)."""
    if "|" not in line:
        return line
    cells = line.split("|")
    keep = [c for i, c in enumerate(cells) if not (
        0 < i < len(cells) - 1 and _MARKER.fullmatch(c) and _BIG_CELL.fullmatch(cells[i - 1])
        and _BIG_CELL.fullmatch(cells[i + 1]))]
    return "|".join(keep)


def _column_record(line: str) -> list[str]:
    """A wide table's column set as a record (answer.table_records: "2022: Total revenue = 17,606; Operating
    income = 6,098") as one line per row ("Total revenue | 2022: 17,606"), so each value keeps its row's name
    and its column's year; any other line as it is."""
    m = _PERIOD_RECORD.match(line)
    if not m or not only_a_date(m.group(1)) or not _KEY_YEAR.search(m.group(1)):
        return [line]
    pairs = [p.split(" = ", 1) for p in m.group(2).split("; ")]
    if not all(len(p) == 2 and _LETTERS.search(p[0]) for p in pairs):
        return [line]
    return [f"{name} | {m.group(1)}: {value}" for name, value in pairs]


_PERIOD_RECORD = re.compile(r"^\s*([^:|;=\n]{1,40}):\s+(.*\s=\s.*)$")


def _running_columns(out: list[Stated], run: int, apart: Sequence[str]) -> None:
    """A statement set as running text gives a line item's 2-3 period columns one after another after its
    label ("Total assets $ 36,500 $ 37,987"): their places, as `value_columns` gives a table row's. Not
    when anything but space or "$" stands between them (``apart``: what stands before each amount of ``out``;
    "December 31, 2020" is a date) or one is a year."""
    amounts = out[run:]
    if (2 <= len(amounts) <= MAX_PERIOD_COLUMNS and all(s.period is None and s.column is None for s in amounts)
            and all(_APART.fullmatch(a) for a in apart[run + 1:])
            and not any(_A_YEAR.fullmatch(f"{s.value:g}") for s in amounts)):
        out[run:] = [replace(s, column=c) for c, s in enumerate(amounts)]


_APART = re.compile(r"[\s$]*")
_A_YEAR = re.compile(r"(?:19|20)\d\d")


# a cell holding one amount ("12,000", "$ (1,250)", "4.5") or a dash for none; a lone "$" belongs to the next cell
_VALUE_CELL = re.compile(r"\$?\s?\(?[-−]?\$?\s?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\)?")
_NONE_CELL = re.compile(r"[-–—]+")
MAX_PERIOD_COLUMNS = 3  # a statement compares a year with one or two before; more columns are quarters, segments


def value_columns(line: str) -> list[int]:
    """The places (0 = first) of the amounts of a table row whose label is followed by 2-3 value cells and
    nothing else ("Total revenue | $ | 12,000 | 11,000 | —": [0, 1]; the dash is a column with no amount),
    the columns of a statement's periods when its header is not written; [] for any other line."""
    if "|" not in line:
        return []
    cells = [c for c in markdown_cells(line) if c and c != "$"]
    n = 0
    while n < len(cells) and (_VALUE_CELL.fullmatch(cells[-1 - n]) or _NONE_CELL.fullmatch(cells[-1 - n])):
        n += 1
    if not 2 <= n <= MAX_PERIOD_COLUMNS or n == len(cells) or not _LETTERS.search(cells[-1 - n]):
        return []
    return [k for k, c in enumerate(cells[len(cells) - n:]) if _VALUE_CELL.fullmatch(c)]


def _named_header(line: str) -> bool:
    """Whether a markdown table line is a header naming its value columns with words ("| | Americas | Europe |")."""
    cells = markdown_cells(line)[1:]
    return bool(cells) and any(_LETTERS.search(c) and not only_a_date(c) for c in cells) and not any(
        _AMOUNT.search(c) for c in cells if not _LETTERS.search(c))


def stated_scales(text: str) -> set[float]:
    """The units a text's tables state ("(in thousands)": 1e3)."""
    return {_table_scale(m) for m in _TABLE_SCALE.finditer(text)}


def _table_scale(m: re.Match[str]) -> float:
    return MAGNITUDE_WORDS[(m.group(1) or m.group(2)).lower().rstrip("s")]


def header_years(line: str) -> list[int]:
    """The years of a markdown header row whose cells are all periods ("| | 2016 | 2015 |", "| | Fiscal 2019 |
    December 31, 2018 |"), one per value column; [] for any other line."""
    cells = [c for c in markdown_cells(line) if c]
    years = [_KEY_YEAR.findall(c) for c in cells]
    if not cells or any(len(y) != 1 or not only_a_date(c) for y, c in zip(years, cells, strict=True)):
        return []
    return [int(y[0]) for y in years]


def only_a_date(text: str) -> bool:
    """Whether a column's key or header names only a period ("December 31, 2016", "Fiscal 2019"): no word of
    a line item's name."""
    return not _LETTERS.search(_DATE_WORDS.sub(" ", text))


def on_its_line(x: float, names: str, stated: Iterable[Stated],
                period: int | None = None) -> tuple[Stated, float] | None:
    """The stated amount that x copies on a line whose label matches ``names`` (a regex of the line
    item's names), with the factor x was rescaled by (stated value = |x| * factor), or None: x is not
    read from that line item. x copies the digits as written (factor 1) or moves them by a thousand,
    as a reader does who writes a table's "1,001,425" (in thousands) as 1,001.425 (millions); a
    moved number counts only when its digits say enough to be that line's (RESCALED_MIN_DIGITS).
    ``period``: the fiscal year x is asked for; an amount whose column names another year is not it."""
    pattern = re.compile(names, re.IGNORECASE)
    lines = [s for s in stated if pattern.search(s.label) and (period is None or s.period in (None, period))]
    for factor in (1.0, 1e3, 1e-3):
        found = next((s for s in lines if close(abs(x) * factor, s.value)
                      and (factor == 1.0 or significant_digits(s.value) >= RESCALED_MIN_DIGITS)), None)
        if found is not None:
            return found, factor
    return None


# a number moved by a thousand matches a stated one by its digits alone: "1.1" for "1,100" says too little
RESCALED_MIN_DIGITS = 4


def significant_digits(v: float) -> int:
    """How many significant digits a stated number writes (1,001,425: 7; 1,100: 2)."""
    return len(f"{abs(v):.6f}".replace(".", "").strip("0"))


def amount_of(x: float, stated: Sequence[Stated]) -> float | None:
    """The amount (in units, scale applied) the reader's number x copies: a stated number with the
    same digits, else one it rescaled by a power of a thousand (a table's 59,268 in millions copied
    as 59.268 billions); None when no stated number of a known scale has its digits."""
    if not math.isfinite(x) or x == 0:
        return None
    for factor in (1.0, 1e3, 1e-3, 1e6, 1e-6):
        found = next((s for s in stated if s.scale is not None and close(abs(x) * factor, s.value)), None)
        if found is not None and found.scale is not None:
            return math.copysign(found.value * found.scale, x)
    return None


def asked_scale(question: str) -> tuple[float, str] | None:
    """The scale and unit a question asks an amount in ("in USD millions" -> (1e6, "million USD")), or None."""
    m = _ASKED_SCALE.search(question)
    if not m:
        return None
    word = next(g for g in m.groups() if g).lower()
    return MAGNITUDE_WORDS[word], f"{word} USD"
