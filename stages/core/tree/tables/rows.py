"""The lines of a table in running text: which line is a row or a label, and a row's cells.

A row is a short line ending in numbers ("Human life, avg, 1 year 11,023"); `split_row`
cuts it into a label (the leading words) and values (the trailing numbers), keeping
together what one cell wrote with spaces in it (a duration, a mean and its deviation, a
number and its bracketed interval or its unit).
"""
from __future__ import annotations

import re

from stages.core.extract.captions import FIGURE_CAPTION

# "Table 3: ...", "TAB. 2. ..."; and "T able B2 Comparison ..." without the colon, the word split by a PDF font.
# A bare "TABLE II" line (IEEE) is no match: `IEEE_CAPTION` reads it, with its title on the lines below
TABLE_CAPTION = re.compile(r"^(?:(?i:table|tab\.)\s*(?:[A-Z]?\d+|[IVXL]+)\s*[:.]\s*\S"
                           r"|T able\s+[A-Z]?\d+\s+[A-Z][A-Za-z])")
# a financial statement's title, which captions the statement's rows below it as "Table N:" captions a
# paper's table: "Consolidated Statements of Cash Flows", "Condensed Consolidated Balance Sheets",
# "Statement of Operations" (a PDF font may split a word: "Cash Flow s"); the whole line, nothing after it
# but "(unaudited)", "(continued)", a footnote mark or "<Company> and Subsidiaries"
STATEMENT_TITLE = re.compile(
    r"^(?i:(?:(?:condensed|unaudited|interim)\s+)*(?:consolidated\s+(?:and\s+combined\s+)?)?(?:condensed\s+)?"
    r"(?:statements?\s+of\s+(?:consolidated\s+)?(?:cash\s+flow\s?s?|operations|income|earnings|"
    r"comprehensive\s+(?:income|loss|earnings)(?:\s+\(loss\))?|financial\s+(?:position|condition)|"
    r"(?:changes\s+in\s+)?(?:(?:stock|share)(?:holders|owners)['’]?\s+)?equity(?:\s+\(deficit\))?)"
    r"|balance\s+sheets?))(?:\s*\((?i:unaudited|continued|[a-z])\))?"
    r"(?:\s+[A-Z][\w&.,' ]{0,60}\b(?i:subsidiary|subsidiaries)(?:\s+(?i:companies))?)?\s*$")
# IEEE's caption: a bare "TABLE IV" line, the title on the lines after it (often in capitals), the table below
IEEE_CAPTION = re.compile(r"^TABLE\s+(?:[IVXL]+|\d+)\s*$")

# a cell value: 11,023 / 0.70(0.54, / 74% / $433–$1472 / 2.4x / 269k / 1.5e-3 (a digit, no letters but
# one unit suffix); or a filler: N/A, ±, – (a missing value)
_SUFFIX = re.compile(r"(?<=\d)(?:[kKMBGx×]|[eE][+\-]?\d+)(?=[^A-Za-z]*$)")
_FILLER = {"±", "-", "–", "—", "n/a", "na", "n.a.", "/", "×", "x", "*", "†", "‡", "✓", "✗"}
PROSE_WORDS = {"the", "a", "an", "of", "and", "to", "in", "is", "are", "for", "that", "with", "on", "as", "by",
               "we", "this", "was", "were", "from", "which", "be", "it", "our", "their", "these", "has", "have"}
# a magnitude word written after a number ("258 bil.", "647 mil."): one cell with it
_MAGNITUDES = {"bil.", "mil.", "bn.", "mn.", "tril.", "thou."}
# a line's last word a capitalised word cut short by a period ("Util.", "Avg."): an abbreviation in a header (a
# lower-case one, "freq.", cannot be told from a sentence's last word, "small.", so it is not read as one)
_ABBREVIATED_END = re.compile(r"(?:^|\s)[A-Z][A-Za-z]{1,7}\.$")
_HEADING = re.compile(r"^\d{1,2}(?:\.\d{1,2})*\.?\s+[A-Z][a-z]+(?:\s+[A-Za-z]+)*$")  # '2.1 Setup'
# a number that belongs to a model's name: a size ("8B", "70B", "1.3B", "560M") or a one-digit version ("3.1")
NAME_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)?[BM]|\d\.\d)$")
MAX_LABEL_CHARS = 100  # a longer line is prose, never a header or a row label

# joins a number to the unit written after it ("0.180 $/h") so the pair reads as one value
UNIT_JOIN = "\u2060"
_CELL_UNIT = r"(?:[$€£]?[A-Za-z$€£]{0,4}/[A-Za-z]{1,4}|[kKMGTP]?(?:B|Wh|W|J|Hz)|ms|%)"
_UNIT_PAIRS = re.compile(rf"(?:(?<=[\s)])|^)(?:\d[\d,.]*\s+{_CELL_UNIT}(?:\s+|$)){{2,}}$")


def bound_units(text: str) -> str:
    """A line ending in two or more numbers each followed by its unit ("T4 Spot 0.180 $/h 0.395 $/h",
    "Memory capacity 80 GB 96 GB") with each number bound to its unit by `UNIT_JOIN`; else the line.
    Such a line ends in a unit, not a number, so without this it would read as no row."""
    m = _UNIT_PAIRS.search(text)
    if not m:
        return text
    tail = re.sub(rf"(\d[\d,.]*)\s+({_CELL_UNIT})(?=\s|$)", lambda g: g.group(1) + UNIT_JOIN + g.group(2), m.group(0))
    return f"{text[:m.start()].rstrip()} {tail}".lstrip()  # "(between continents)0.08 $/GB": a space again


def numeric(tok: str) -> bool:
    """A number, maybe with one unit suffix ("2.4x", "269k") or a unit bound to it (`bound_units`)."""
    core = _SUFFIX.sub("", tok.split(UNIT_JOIN)[0], count=1)
    return any(c.isdigit() for c in core) and not any(c.isalpha() for c in core)


def _is_number(tok: str) -> bool:
    return numeric(tok) or tok.lower() in _FILLER


def _magnitude_end(toks: list[str], i: int) -> bool:
    """Whether toks[:i] ends in a number and its magnitude word ("258 bil.")."""
    return i >= 2 and toks[i - 1].lower() in _MAGNITUDES and numeric(toks[i - 2])


def row_like(text: str, dash_fillers: bool = False, abbreviated_ends: bool = True) -> bool:
    """A table row: ends in a number, or numbers make up at least 40% of its tokens (2 or more).
    A line ending in "-" is a word broken across lines ("Trans-"), unless ``dash_fillers`` and the
    dash stands alone: a missing value ("Llama 2 7B 81 31 6 yrs, 1 mo - -").
    ``abbreviated_ends``: a number and its magnitude word end a row ("1.38 258 bil."), and a citation
    closing a sentence ("... profiler (Smith et al., 2020).") ends prose, not a row; without it, the
    line's last token is read as written (a caption's own wrapped lines are tested so)."""
    toks = text.split()
    if len(toks) < 2:  # a lone number is a page number or a footnote mark
        return False
    if text.endswith("-") and not (dash_fillers and toks[-1] == "-"):
        return False
    if abbreviated_ends:
        if text.endswith(")."):
            return False
        if _magnitude_end(toks, len(toks)):
            toks = toks[:-1]
            text = " ".join(toks)
    if text.endswith(".") and (not numeric(toks[-1].rstrip(".")) or text.endswith("].")):
        return False  # a sentence end ('... (see Fig. 3).', '... listed in Table 4 [21, 22, 23, 24].')
    if sum(t.lower() in PROSE_WORDS for t in toks) >= 3:
        return False
    nums = sum(_is_number(t) for t in toks)
    real = sum(numeric(t) for t in toks)
    if real == 0:
        return False
    if _is_number(toks[-1]) and (len(toks) <= 12 or nums / len(toks) >= 0.25):
        return True
    return real >= 2 and nums / len(toks) >= 0.4


def label_like(text: str) -> bool:
    """A short line that can be a header or a row label inside a table, not prose (nor a footnote URL).
    A line of no prose words may end in a capitalised abbreviation ("Max. Memory Util."); a line ending
    in a citation's ")." is prose."""
    if not text or len(text) > MAX_LABEL_CHARS or TABLE_CAPTION.match(text) or FIGURE_CAPTION.match(text):
        return False
    if re.search(r"https?:|www\.|@", text):
        return False
    words = re.findall(r"[A-Za-z]+", text.lower())
    prose = sum(w in PROSE_WORDS for w in words)
    if prose >= 2 and prose >= 0.3 * len(words):  # 'Water for Training(million L) Water for Each ...' is a header
        return False
    if re.search(r"\b[a-z]{4,}[.!?] [A-Z]", text):  # a sentence ends inside the line ('Renew. Gas' does not)
        return False
    if _HEADING.match(text):
        return False
    if text.endswith(")."):
        return False  # a sentence ending in a citation ("(Smith et al., 2020).")
    if prose == 0 and _ABBREVIATED_END.search(text):
        return True
    return not re.search(r"[a-z]{3,}[.!?]$|\d\]\.$", text)  # a sentence end (after a citation: "[21, 24].")


# a cell that is a duration: "21 years", "7 yrs, 10 mo", "2 mo, 1 wk"
_TIME_UNITS = {"year", "years", "yr", "yrs", "month", "months", "mo", "mos", "week", "weeks", "wk", "wks",
               "day", "days", "hour", "hours", "hr", "hrs"}


def _duration_start(toks: list[str], i: int) -> int | None:
    """Start of the duration cell that ends before toks[i] ("7 yrs, 10 mo"), or None."""
    if i < 2 or toks[i - 1].lower() not in _TIME_UNITS or not numeric(toks[i - 2]):
        return None
    j = i - 2
    if j >= 2 and toks[j - 1].endswith(",") and toks[j - 1][:-1].lower() in _TIME_UNITS and numeric(toks[j - 2]):
        j -= 2
    return j


def split_row(text: str, durations: bool = False) -> tuple[str, list[str]]:
    """(label, values): the trailing run of numbers are the values ('Human life, avg, 1 year' / ['11,023']);
    a number and its magnitude word ("258 bil.") are one value, and so are the pieces of one value a
    space split apart (`joined_cells`, `joined_plus_minus`). ``durations``: a duration ("7 yrs, 10 mo")
    is one value of the run too (a table read against a bracketed header, `read_table`)."""
    toks = text.split()
    i = len(toks)
    cells: list[str] = []
    while i > 0:
        if _magnitude_end(toks, i):
            cells.insert(0, f"{toks[i - 2]} {toks[i - 1]}")
            i -= 2
            continue
        if _is_number(toks[i - 1]):
            cells.insert(0, toks[i - 1])
            i -= 1
            continue
        j = _duration_start(toks, i) if durations else None
        if j is None:
            break
        cells.insert(0, " ".join(toks[j:i]))
        i = j
    label, values = (" ".join(toks[:i]), cells) if i else ("", cells)  # numbers only: no label
    return label, joined_cells(joined_plus_minus(values))


_OPENS = re.compile(r"\([^)]*$")  # "0.70(0.54," opens a bracket it does not close
_BRACKETED = re.compile(r"^\(.*\d.*\)%?$")  # "(13800)", "(5.86%)", "(±53.77)", "(-2.52%)"
_SHORT_GROUP = re.compile(r"\d,\d{1,2}$")  # "$3,20": a thousands group cut short
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?$")


def joined_cells(values: list[str]) -> list[str]:
    """A row's values with the pieces a space split out of one cell put back together: a number's bracketed
    companion ("2.51(1.84, 3.17)", "0.61 (13800)", "416.29 (5.86%)", "376.41 (±53.77)": an interval, an
    equivalent, a change, a deviation), a power of ten ("1.0 × 10−4") and a number cut inside its
    thousands ("$3,20 1,722" is $3,201,722). Otherwise a row has a value too many, and its values no
    longer line up with the header's columns."""
    out: list[str] = []
    k = 0
    while k < len(values):
        v = values[k]
        if out and _OPENS.search(out[-1]):  # inside a bracket the last cell opened
            out[-1] = f"{out[-1]} {v}"
        elif out and _BRACKETED.match(v) and numeric(out[-1]) and not _BRACKETED.match(out[-1]):
            out[-1] = f"{out[-1]} {v}"
        elif v in ("×", "x") and out and numeric(out[-1]) and k + 1 < len(values) \
                and re.match(r"^10[−\-–]?\d", values[k + 1]):
            out[-1] = f"{out[-1]} {v} {values[k + 1]}"
            k += 1
        elif out and _SHORT_GROUP.search(out[-1]) and _GROUPED.search(out[-1] + v):
            out[-1] = out[-1] + v
        else:
            out.append(v)
        k += 1
    return out


def joined_plus_minus(values: list[str]) -> list[str]:
    """'0.871', '±', '0.302' is one cell (a mean and its deviation), not three; so is 'Mean ± Std'."""
    out: list[str] = []
    k = 0
    while k < len(values):
        if values[k] == "±" and out and k + 1 < len(values):
            out[-1] = f"{out[-1]} ± {values[k + 1]}"
            k += 2
            continue
        out.append(values[k])
        k += 1
    return out


# rows glued into one line by extraction ("... 4.833 ± 0.650GPT-4.1 mini 0.450 ..."): a decimal number, a
# dash or a closing bracket followed at once by a name (two letters, or a letter and a digit: "o3"), never
# a unit suffix ("2.4x ") nor an exponent ("1.5e-3")
_GLUED_ROW = re.compile(r"(\d\.\d+|[—)])(?=[A-DF-Za-df-z][A-Za-z0-9]|[Ee][A-Za-z])")
MIN_GLUED_SPLITS = 3  # fewer glue points in a line are a name with a number in it, not glued rows


def unglued(text: str) -> list[str]:
    """A line holding several table rows glued together, cut back into its rows (else the line)."""
    if len(_GLUED_ROW.findall(text)) < MIN_GLUED_SPLITS:
        return [text]
    return [p.strip() for p in _GLUED_ROW.sub(lambda m: m.group(1) + "\n", text).split("\n") if p.strip()]
