"""A number the model copied, read back with what the context writes next to it.

Asked for a JSON number, the 1.5B reader copies the right digits and loses what
stands next to them: "772 billion queries" comes back as 772, "32 billion
word-pieces" as 32000000, "100ms intervals" as 100 when the question asks for
seconds. The digits are right; the magnitude
word or suffix ("billion", "8B", "$40M") or the unit ("ms") is lost. Code puts it
back: each number of the context is read as a `Mention` (digits, value with its
magnitude, the unit written right after it), and the model's number is matched
against them, the pointed units first.
"""
from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from stages.core.answer.grounding import MAGNITUDE_SUFFIXES, MAGNITUDE_WORDS
from stages.core.common.values import close
from stages.core.common.vocab import UNIT_SCALES as _SCALES
from stages.core.common.vocab import answer_unit_scale as unit_scale  # (family, scale) of an answer unit
from stages.core.tree.tables import is_separator, markdown_cells

# digits, then a magnitude word or a suffix letter glued to the digits, then the unit word right after
# ("gigawatt-hours" whole: read as "gigawatt" it would be a power)
_MENTION = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?"
    rf"(?:\s*((?i:{'|'.join(MAGNITUDE_WORDS)}))\b|([{''.join(MAGNITUDE_SUFFIXES)}])(?![A-Za-z]))?"
    r"(?:\s?(?:GPU[\s-]?)?([A-Za-zµμ]+?(?:-hours?)?)(?:\s?CO\s?2\s?e?q?)?(?![A-Za-z]))?"
)
_URL = re.compile(r"(?:https?://|www\s?\.)\S+(?:\s?\.\S+)*", re.IGNORECASE)  # "http://www .x.com/a-10" as PDFs break it
# "32 billion" written as 32000000 (zeros slipped by thousands), "6.1 billion" as 61000000000 (the decimal
# point dropped): the digits agree up to a power of ten
_POWERS_OF_TEN = tuple(10.0 ** k for k in range(1, 13))


@dataclass(frozen=True)
class Mention:
    """One number as a text writes it."""

    digits: float  # "772" in "772 billion"
    value: float  # with its magnitude word or suffix: 772e9
    unit: str  # the word right after it when it is a known unit ("ms", "GW"), else ""


# "Finetuning energy (kWh)", "Power (W)", "Water for Training (million L)": a table label whose unit stands in
# brackets at its end, after a magnitude word or not
_BRACKET_UNIT = rf"\((?:((?i:{'|'.join(MAGNITUDE_WORDS)}))\s*)?([A-Za-zµμ$]*(?:-hours?)?)\)"
_LABEL_UNIT = re.compile(_BRACKET_UNIT + r"\s*:?\s*$")
_ANY_BRACKET_UNIT = re.compile(_BRACKET_UNIT)  # a record's column name: "Water for Training (million L) Total Water"
# "Power (W): 517.66" in a table row written as a sentence (table_row_sentences)
_LABELLED_CELL = re.compile(r"\(([A-Za-zµμ]+(?:-hours?)?)\):\s*([^|]+)")
# a cell of a table record (table_records): "Arizona: Water for Training (million L) Total Water = 9.629; ..."
# or, one record per column, "Water for Training (million L) Total Water: U.S. Average = 5.439; Arizona = 9.629"
_RECORD_CELL = re.compile(r"(?:^|;)\s*([^;=]+?)\s=\s[-−]?(?=\d)")


def _label_unit(label: str, anywhere: bool = False) -> tuple[str, float]:
    """(unit, magnitude) a label writes in brackets at its end (``anywhere``: its last such bracket):
    "(kWh)" -> ("kWh", 1), "(million L)" -> ("L", 1e6), "(million)" -> ("", 1e6); ("", 1) for none or a
    unit of no known family ("(L/kWh)")."""
    found = list(_ANY_BRACKET_UNIT.finditer(label)) if anywhere else [m for m in [_LABEL_UNIT.search(label)] if m]
    if not found:
        return "", 1.0
    m = found[-1]
    scale = MAGNITUDE_WORDS[m.group(1).lower()] if m.group(1) else 1.0
    return (m.group(2) if m.group(2) in _SCALES else ""), scale


def _record_units(text: str) -> dict[int, tuple[str, float]]:
    """Start of each number of a table record line -> the (unit, magnitude) its cell's column name, else
    the record's head ("Water for Training (million L) Total Water: ..."), writes in brackets."""
    if " = " not in text:
        return {}
    head = text.split(": ", 1)[0] if ": " in text else ""
    out = {}
    for m in _RECORD_CELL.finditer(text):
        unit = _label_unit(m.group(1), anywhere=True)
        if unit == ("", 1.0):
            unit = _label_unit(head, anywhere=True)
        if unit != ("", 1.0):
            out[m.end()] = unit
    return out


def mentions(text: str) -> list[Mention]:
    """Every number of the text with its magnitude and unit; a web address states none (the
    "10" of ".../report-10-million-cars..." would pass for a bare 10 next to "10 million cars").
    A table cell takes the unit its row label or column header writes in brackets
    ("| Finetuning energy (kWh) | 7,571 |" states 7,571 kWh), when it writes none itself."""
    text = _URL.sub(" ", unicodedata.normalize("NFKC", text))
    out: list[Mention] = []
    header: list[str] | None = None
    for line in text.splitlines():
        if not line.strip().startswith("|"):
            header = None
            out += _line_mentions(line)
            continue
        cells = markdown_cells(line)
        if header is None:
            header = cells
            out += [mn for c in cells for mn in _line_mentions(c)]
            continue
        if is_separator(cells):
            continue
        row_unit = _label_unit(cells[0]) if cells else ("", 1.0)
        for j, cell in enumerate(cells):
            unit = row_unit if row_unit[0] else (_label_unit(header[j]) if 0 < j < len(header) else ("", 1.0))
            out += _line_mentions(cell, unit if j > 0 else ("", 1.0))
    return out


def _line_mentions(text: str, cell_unit: tuple[str, float] = ("", 1.0)) -> list[Mention]:
    """The mentions of one line of prose or one table cell (``cell_unit``: the unit and magnitude its label
    writes); a table record's cell takes those its column name writes (`_record_units`)."""
    units = {m.start(2): m.group(1) for m in _LABELLED_CELL.finditer(text) if m.group(1) in _SCALES}
    record = _record_units(text)
    out = []
    for m in _MENTION.finditer(text):
        whole, frac, word, suffix, unit = m.groups()
        if suffix and m.start() and text[m.start() - 1] == "-":
            suffix = None  # "Llama2-13B", "JetMoE-8B": a model's name, not 13 billion of something
        digits = float(whole.replace(",", "") + (frac or ""))
        scale = MAGNITUDE_WORDS[word.lower()] if word else MAGNITUDE_SUFFIXES[suffix] if suffix else 1.0
        own = unit if unit in _SCALES else ""
        if not own and not word and not suffix:
            labelled = [u for start, u in units.items() if start <= m.start() and not text[start:m.start()].strip(" ,;")]
            own, scale = (labelled[0], 1.0) if labelled else record.get(m.start(), cell_unit)
        out.append(Mention(digits, digits * scale, own))
    return out


def _candidate(v: float, mention: Mention, target: tuple[str, float] | None, unit_magnitude: bool) -> float | None:
    """What the model meant by v if it copied this mention: v itself when the mention states v
    in a compatible unit, the restated value when it dropped the magnitude, slipped its zeros or decimal point or
    skipped the unit conversion, None when the mention has nothing to do with v."""
    own = _SCALES.get(mention.unit)
    if own is not None and target is not None and own[0] != target[0]:
        return None  # "100 Gb/s" does not state a number of seconds
    if close(mention.value, v):
        if own is not None and target is not None and own[1] != target[1]:
            return v * own[1] / target[1]  # "100 ms" copied as 100 for seconds
        return v
    if own is not None and target is not None and own[1] != target[1] and any(
            close(v * p, mention.value) or close(v, mention.value * p) for p in _POWERS_OF_TEN):
        return mention.value * own[1] / target[1]  # converted by a wrong power of ten: 7,571 kWh as 0.007571 MWh
    if unit_magnitude or mention.value == mention.digits:
        return None
    if close(mention.digits, v):
        return mention.value  # "772 billion" copied as 772
    if mention.digits and any(close(v / mention.digits, p) or close(mention.digits / v, p) for p in _POWERS_OF_TEN):
        return mention.value  # "32 billion" written as 32000000, "6.1 billion" as 61000000000
    return None


def restate(v: float, pointed: Sequence[str], others: Sequence[str], unit: str) -> float:
    """The value the context states for the model's number v: v itself when a mention states it,
    else the mention it copied with the magnitude or unit put back. The pointed units decide
    first; the other units only when no pointed unit mentions v at all."""
    if not math.isfinite(v) or v == 0:
        return v
    target = unit_scale(unit)
    unit_magnitude = any(w in (unit or "").lower() for w in MAGNITUDE_WORDS)
    other_mentions = [mn for t in others for mn in mentions(t)]
    for said in ([mn for t in pointed for mn in mentions(t)], other_mentions):
        # the other units only when no pointed unit mentions v
        found = [c for mn in said if (c := _candidate(abs(v), mn, target, unit_magnitude)) is not None]
        if not found:
            continue
        if any(close(c, abs(v)) for c in found):
            # stated without a unit (a table cell: "3,500") while every sentence that writes the same
            # number with a unit says another scale ("3,500 MWh" for an answer in GWh): converted
            with_unit = [c for mn in (*said, *other_mentions) if mn.unit and close(mn.value, abs(v))
                         and (c := _candidate(abs(v), mn, target, unit_magnitude)) is not None]
            if with_unit and not any(close(c, abs(v)) for c in with_unit):
                return math.copysign(with_unit[0], v)
            return v
        return math.copysign(found[0], v)
    return v


def significant_digits(x: float) -> str:
    """The significant digits of x ("4" for 4e15 and for 40, "125" for 0.0125), a decimal point
    between them kept ("5.439"): the leading digits a runaway operand shares (arithmetic.runaway)."""
    return re.sub(r"[^1-9]*$", "", re.sub(r"^[0.]*", "", f"{abs(x):.15f}".rstrip("0"))) or "0"
