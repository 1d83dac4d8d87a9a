"""Tables: found in extracted text, kept as one table node whose rows are units.

Text extraction (the WattBot JSON, a PDF page without ruled tables) leaves a table
as bare lines in the running text: a header, rows of short lines ending in numbers,
and a "Table N: ..." caption above or below them, e.g.

    Consumption CO 2e (lbs)
    Human life, avg, 1 year 11,023
    ...
    Table 1: Estimated CO 2 emissions from training com-
    mon NLP models, compared to familiar consumption.

Glued into the prose paragraph around it, a row matches nothing well. `find_tables`
takes such a region out of the line flow (the prose around it joins up again) and
puts one table line in its place, whose text is a compact markdown table with the
caption on its first line; `table_row_sentences` turns it into one sentence per row
that carries the caption and the header:

    Table 1: Estimated CO2 emissions ... | Consumption: Human life, avg, 1 year | CO 2e (lbs): 11,023

Rows are split into a label (the leading words) and values (the trailing numbers);
column names come from the header when its words line up with the values, else the
whole header names the values together. Tables PDF extraction already found
(`kind == "table"`, markdown) only get the caption next to them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from stages.core.extract.captions import FIGURE_CAPTION
from stages.core.extract.records import Line

# "Table 3: ...", "TAB. 2. ..."; and "T able B2 Comparison ..." without the colon, the word split by a PDF font
# (zschache2025). IEEE's bare "TABLE II" line (title on the next line) is not read as a caption: measured with
# it, the tables it adds (kim2025, xia2024, khan2025) come out too mangled to help (docs/reader.md, "Table captions").
TABLE_CAPTION = re.compile(r"^(?:(?i:table|tab\.)\s*(?:[A-Z]?\d+|[IVXL]+)\s*[:.]\s*\S"
                           r"|T able\s+[A-Z]?\d+\s+[A-Z][A-Za-z])")
# a cell value: 11,023 / 0.70(0.54, / 74% / $433–$1472 / 2.4x / 269k / 1.5e-3 (a digit, no letters but
# one unit suffix); or a filler: N/A, ±, – (a missing value)
_SUFFIX = re.compile(r"(?<=\d)(?:[kKMBGx×]|[eE][+\-]?\d+)(?=[^A-Za-z]*$)")
_FILLER = {"±", "-", "–", "—", "n/a", "na", "n.a.", "/", "×", "x", "*", "†", "‡", "✓", "✗"}
_PROSE_WORDS = {"the", "a", "an", "of", "and", "to", "in", "is", "are", "for", "that", "with", "on", "as", "by",
                "we", "this", "was", "were", "from", "which", "be", "it", "our", "their", "these", "has", "have"}
# a magnitude word written after a number ("258 bil.", "647 mil."): one cell with it (tree.abbreviated_ends)
_MAGNITUDES = {"bil.", "mil.", "bn.", "mn.", "tril.", "thou."}
# a line's last word a capitalised word cut short by a period ("Util.", "Avg."): an abbreviation in a header (a
# lower-case one, "freq.", cannot be told from a sentence's last word, "small.", so it is not read as one)
_ABBREVIATED_END = re.compile(r"(?:^|\s)[A-Z][A-Za-z]{1,7}\.$")
_HEADING = re.compile(r"^\d{1,2}(?:\.\d{1,2})*\.?\s+[A-Z][a-z]+(?:\s+[A-Za-z]+)*$")  # '2.1 Setup'
# IEEE's caption: a bare "TABLE IV" line, the title on the lines after it (often in capitals), the table below
IEEE_CAPTION = re.compile(r"^TABLE\s+(?:[IVXL]+|\d+)\s*$")
# a number that belongs to a model's name: a size ("8B", "70B", "1.3B", "560M") or a one-digit version ("3.1")
_NAME_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)?[BM]|\d\.\d)$")
MAX_NAME_NUMBERS = 2  # "Llama 3.1 8B"; five sizes in a row (li2025a's transposed "Params 175B 280B ...") are values
MAX_CAPTION_LINES = 6
MAX_HEADER_LINES = 24  # li2025b's water table has a header of 22 one-word lines
CAPTION_CHARS_IN_ROW = 160  # the caption a row sentence repeats is cut here (the table node keeps all of it)


# joins a number to the unit written after it ("0.180 $/h") so the pair reads as one value (tree.unit_cells)
UNIT_JOIN = "\u2060"
_CELL_UNIT = r"(?:[$€£]?[A-Za-z$€£]{0,4}/[A-Za-z]{1,4}|[kKMGTP]?(?:B|Wh|W|J|Hz)|ms|%)"
_UNIT_PAIRS = re.compile(rf"(?:(?<=[\s)])|^)(?:\d[\d,.]*\s+{_CELL_UNIT}(?:\s+|$)){{2,}}$")


def bound_units(text: str) -> str:
    """A line ending in two or more numbers each followed by its unit ("T4 Spot 0.180 $/h 0.395 $/h",
    "Memory capacity 80 GB 96 GB") with each number bound to its unit by `UNIT_JOIN`; else the line."""
    m = _UNIT_PAIRS.search(text)
    if not m:
        return text
    tail = re.sub(rf"(\d[\d,.]*)\s+({_CELL_UNIT})(?=\s|$)", lambda g: g.group(1) + UNIT_JOIN + g.group(2), m.group(0))
    return f"{text[:m.start()].rstrip()} {tail}".lstrip()  # "(between continents)0.08 $/GB": a space again


def _numeric(tok: str) -> bool:
    core = _SUFFIX.sub("", tok.split(UNIT_JOIN)[0], count=1)
    return any(c.isdigit() for c in core) and not any(c.isalpha() for c in core)


def _is_number(tok: str) -> bool:
    return _numeric(tok) or tok.lower() in _FILLER


def _magnitude_end(toks: list[str], i: int) -> bool:
    """Whether toks[:i] ends in a number and its magnitude word ("258 bil.")."""
    return i >= 2 and toks[i - 1].lower() in _MAGNITUDES and _numeric(toks[i - 2])


def row_like(text: str, dash_fillers: bool = False, abbreviations: bool = False) -> bool:
    """A table row: ends in a number, or numbers make up at least 40% of its tokens (2 or more).
    A line ending in "-" is a word broken across lines ("Trans-"), unless ``dash_fillers`` and the
    dash stands alone: a missing value ("Llama 2 7B 81 31 6 yrs, 1 mo - -", morrison2025 Table 2).
    ``abbreviations``: a number and its magnitude word end a row ("1.38 258 bil."); a citation closing a
    sentence ("... profiler (Rasley et al., 2020).") ends prose."""
    toks = text.split()
    if len(toks) < 2:  # a lone number is a page number or a footnote mark
        return False
    if text.endswith("-") and not (dash_fillers and toks[-1] == "-"):
        return False
    if abbreviations:
        if text.endswith(")."):
            return False
        if _magnitude_end(toks, len(toks)):
            toks = toks[:-1]
            text = " ".join(toks)
    if text.endswith(".") and (not _numeric(toks[-1].rstrip(".")) or text.endswith("].")):
        return False  # a sentence end ('... (see Fig. 3).', '... listed in Table 4 [21, 22, 23, 24].')
    if sum(t.lower() in _PROSE_WORDS for t in toks) >= 3:
        return False
    nums = sum(_is_number(t) for t in toks)
    real = sum(_numeric(t) for t in toks)
    if real == 0:
        return False
    if _is_number(toks[-1]) and (len(toks) <= 12 or nums / len(toks) >= 0.25):
        return True
    return real >= 2 and nums / len(toks) >= 0.4


def label_like(text: str, max_chars: int = 100, abbreviations: bool = False) -> bool:
    """A short line that can be a header or a row label inside a table, not prose (nor a footnote URL).
    ``abbreviations``: a line of no prose words may end in a capitalised abbreviation ("Max. Memory Util."); a
    line ending in a citation's ")." is prose."""
    if not text or len(text) > max_chars or TABLE_CAPTION.match(text) or FIGURE_CAPTION.match(text):
        return False
    if re.search(r"https?:|www\.|@", text):
        return False
    words = re.findall(r"[A-Za-z]+", text.lower())
    prose = sum(w in _PROSE_WORDS for w in words)
    if prose >= 2 and prose >= 0.3 * len(words):  # 'Water for Training(million L) Water for Each ...' is a header
        return False
    if re.search(r"\b[a-z]{4,}[.!?] [A-Z]", text):  # a sentence ends inside the line ('Renew. Gas' does not)
        return False
    if _HEADING.match(text):
        return False
    if abbreviations and text.endswith(")."):
        return False  # a sentence ending in a citation ("(Rasley et al., 2020).")
    if abbreviations and prose == 0 and _ABBREVIATED_END.search(text):
        return True
    return not re.search(r"[a-z]{3,}[.!?]$|\d\]\.$", text)  # a sentence end (after a citation: "[21, 24].")


# a cell that is a duration: "21 years", "7 yrs, 10 mo", "2 mo, 1 wk" (morrison2025 Tables 1 and 2)
_TIME_UNITS = {"year", "years", "yr", "yrs", "month", "months", "mo", "mos", "week", "weeks", "wk", "wks",
               "day", "days", "hour", "hours", "hr", "hrs"}


def _duration_start(toks: list[str], i: int) -> int | None:
    """Start of the duration cell that ends before toks[i] ("7 yrs, 10 mo"), or None."""
    if i < 2 or toks[i - 1].lower() not in _TIME_UNITS or not _numeric(toks[i - 2]):
        return None
    j = i - 2
    if j >= 2 and toks[j - 1].endswith(",") and toks[j - 1][:-1].lower() in _TIME_UNITS and _numeric(toks[j - 2]):
        j -= 2
    return j


def split_row(text: str, join_plus_minus: bool = True, durations: bool = False,
              joined: bool = False, abbreviations: bool = False) -> tuple[str, list[str]]:
    """(label, values): the trailing run of numbers are the values ('Human life, avg, 1 year' / ['11,023']);
    ``durations``: a duration ("7 yrs, 10 mo") is one value of the run too; ``joined``: the pieces of one
    value are one cell again (`joined_cells`); ``abbreviations``: a number and its magnitude word ("258 bil.")
    are one value."""
    toks = text.split()
    i = len(toks)
    cells: list[str] = []
    while i > 0:
        if abbreviations and _magnitude_end(toks, i):
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
    values = _joined_plus_minus(values) if join_plus_minus else values
    return label, joined_cells(values) if joined else values


_OPENS = re.compile(r"\([^)]*$")  # "0.70(0.54," opens a bracket it does not close
_BRACKETED = re.compile(r"^\(.*\d.*\)%?$")  # "(13800)", "(5.86%)", "(±53.77)", "(-2.52%)"
_SHORT_GROUP = re.compile(r"\d,\d{1,2}$")  # "$3,20": a thousands group cut short
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?$")


def joined_cells(values: list[str]) -> list[str]:
    """A row's values with the pieces a space split out of one cell put back together: a number's bracketed
    companion ("2.51(1.84, 3.17)", "0.61 (13800)", "416.29 (5.86%)", "376.41 (±53.77)": an interval, an
    equivalent, a change, a deviation; han2024, li2025a), a power of ten ("1.0 × 10−4", luccioni2024 Table 5)
    and a number cut inside its thousands ("$3,20 1,722" is $3,201,722, strubell2019 Table 3)."""
    out: list[str] = []
    k = 0
    while k < len(values):
        v = values[k]
        if out and _OPENS.search(out[-1]):  # inside a bracket the last cell opened
            out[-1] = f"{out[-1]} {v}"
        elif out and _BRACKETED.match(v) and _numeric(out[-1]) and not _BRACKETED.match(out[-1]):
            out[-1] = f"{out[-1]} {v}"
        elif v in ("×", "x") and out and _numeric(out[-1]) and k + 1 < len(values) \
                and re.match(r"^10[−\-–]?\d", values[k + 1]):
            out[-1] = f"{out[-1]} {v} {values[k + 1]}"
            k += 1
        elif out and _SHORT_GROUP.search(out[-1]) and _GROUPED.search(out[-1] + v):
            out[-1] = out[-1] + v
        else:
            out.append(v)
        k += 1
    return out


def _joined_plus_minus(values: list[str]) -> list[str]:
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


# rows glued into one line by extraction ("... 4.833 ± 0.650GPT-4.1 mini 0.450 ...", jegham2025 Table 4):
# a decimal number, a dash or a closing bracket followed at once by a name (two letters, or a letter and
# a digit: "o3"), never a unit suffix ("2.4x ") nor an exponent ("1.5e-3")
_GLUED_ROW = re.compile(r"(\d\.\d+|[—)])(?=[A-DF-Za-df-z][A-Za-z0-9]|[Ee][A-Za-z])")
MIN_GLUED_SPLITS = 3  # fewer glue points in a line are a name with a number in it, not glued rows


def unglued(text: str) -> list[str]:
    """A line holding several table rows glued together, cut back into its rows (else the line)."""
    if len(_GLUED_ROW.findall(text)) < MIN_GLUED_SPLITS:
        return [text]
    return [p.strip() for p in _GLUED_ROW.sub(lambda m: m.group(1) + "\n", text).split("\n") if p.strip()]


def _most_common(counts: list[int]) -> int:
    """The most common of some counts (the first seen among equals)."""
    return max(set(counts), key=counts.count)


def _name_takes(label: str, values: list[str], k: int) -> tuple[str, list[str]]:
    """A row cut to its last k values, the values before them given back to its name ("OLMo | 2 13B 230"
    with k=1 is "OLMo 2 13B | 230"); the row as it is when it has k values or fewer."""
    if len(values) <= k:
        return label, values
    return " ".join([label, *values[: len(values) - k]]).strip(), values[len(values) - k:]


@dataclass(frozen=True)
class TableRules:
    """Which table-reading rules are on: params.yaml `tree`'s table flags (`from_params`), handed whole from
    `find_tables` to `_table_from` and each `Table`. The defaults are the rules off (the tables before
    issue 25), so a test turns on just the rule it checks. A new rule is a field here, one of the same name
    in TreeParams, and its use."""

    # tree.table_columns == "segment": name columns from a glued header (`header_chunks`), cut glued rows
    # apart, read "0.871 ± 0.302" as one cell; False: the table as before issue 25
    segment_header: bool = True
    # a bare "TABLE IV" line with its title below it is a caption too, of the rows below the title
    ieee_captions: bool = False
    # tree.caption_gap_lines: a caption with no table right below it takes one that starts after up to this
    # many footnote or page-number lines, which stay in the prose, when the header names each of its value
    # columns; rows may then end in a lone "-". Not where tables are captioned below them
    caption_gap: int = 0
    # a header of bracketed names ("Power Usage (MWh) Carbon Emissions (tCO2eq) ...") sets the number of value
    # columns; durations ("7 yrs, 10 mo") are cells; numbers in a row's name ("OLMo 2 13B") go back to the
    # name (`Table.bracketed_fit`)
    bracketed_columns: bool = False
    # a model's version and size numbers belong to its row's name (`Table.name_numbers_fit`)
    name_numbers: bool = False
    # a header that ends in the same sub-header repeated under each group name ("Duration (s) Energy consumed
    # (Wh) single double ratio single double ratio") names each value column by its group and sub-header
    # (`Table.grouped_columns`)
    grouped_header: bool = False
    # label lines between a table's rows name a group of rows (`_label_groups`)
    group_labels: bool = False
    # rows under a run of more than MAX_HEADER_LINES short lines (zschache2025 Table B1, under a letter-spaced
    # prompt) keep the line right above them as their header, where before they had none
    nearest_header: bool = False
    # unnamed rows are named by their first value (`Table.key_column_fit`), under a title that spans the last
    # header line's names
    key_column: bool = False
    # pieces of one value that a space split apart are one cell again (`joined_cells`)
    joined_cells: bool = False
    # a header with exactly one name per value column (a version joined to its name: "TPU v1") leaves the row
    # names unnamed, when every row has one (cottier2024 Table 3: "H100 TPU v1 TPU v2 ...")
    value_names: bool = False
    # a merged key cell ("8 Mélange ...") is carried down its group ("8 H100-only"; `Table.carried_keys_fit`)
    carried_keys: bool = False
    # a number and the unit written after it ("0.180 $/h") are one value (`bound_units`)
    unit_cells: bool = False
    # group names before the row names' column and a sub-header repeated once per group ("news yelp" over
    # "Model Energy (Wh) Accuracy Energy (Wh) Accuracy") name each column (`Table.groups_above_columns`)
    groups_above: bool = False
    # a header line of no prose words may end in a capitalised abbreviation ("Max. Memory Util. Avg. SM Util."), a
    # row in a number's magnitude word ("258 bil.", one cell), and a line ending in a citation's ")." is prose, not
    # a row ("... profiler (Rasley et al., 2020)."); `row_like`, `label_like`, `split_row`
    abbreviated_ends: bool = False


@dataclass
class Table:
    """A table found in text: caption, header lines and rows as (label, values)."""

    caption: str
    header: list[str] = field(default_factory=list)
    rows: list[tuple[str, list[str]]] = field(default_factory=list)
    rules: TableRules = field(default_factory=TableRules)  # which reading rules are on

    def groups_above_columns(self, k: int) -> list[str] | None:
        """Column names from a header whose last chunks are a sub-header of two names or more repeated under g
        groups ("Energy (Wh) Accuracy Energy (Wh) Accuracy") after the row names' column ("Model"), with the g
        group names as the last g words before it ("Dataset tomatoes emotion", zschache2025 Tables B4, B5):
        "tomatoes Energy (Wh)", "tomatoes Accuracy", ... The row names' column stays unnamed when its chunk reads
        as no name (samsi2024 Table III's "Rate length % change % change % change", glued by its lower-case
        words; its groups come out as "Time", "Energy", "Token"). None unless the repeats cover exactly the k
        value columns."""
        chunks = header_chunks(" ".join(self.header))
        for g, sub in _repeated_tails(chunks, k):
            before = " ".join(chunks[:-k - 1]).split()
            if len(before) < g:
                continue
            label = chunks[-k - 1] if _name_like(chunks[-k - 1]) else ""  # "Rate length % change % change ..."
            return [label, *(f"{grp} {name}" for grp in before[-g:] for name in sub)]
        return None

    def carried_keys_fit(self) -> bool:
        """Rows under a key that only the first row of their group carries (a merged cell: "8 Mélange 1 2 1 1
        13.906 N/A" over "H100-only 3 22.548 38.33%", griggs2024 Tables 3-8) take that key before their name
        ("8 H100-only"). Only when two or more rows start with a number and then one same name ("Mélange"), and
        a row name under one key repeats under another; rows above the first key stay as they are. Returns
        whether the rows changed."""
        starts = [(i, m) for i, (label, v) in enumerate(self.rows) if v and (m := _KEYED.match(label))]
        if len(starts) < 2 or len({m.group(2) for _, m in starts}) != 1:
            return False
        ends = [i for i, _ in starts[1:]] + [len(self.rows)]
        groups = [[label for label, v in self.rows[i + 1:end] if v] for (i, _), end in zip(starts, ends)]
        seen: set[str] = set()
        repeats = False
        for names in groups:
            repeats = repeats or bool(seen & set(names))
            seen |= set(names)
        if not repeats:
            return False
        for (i, m), end in zip(starts, ends):
            for j in range(i + 1, end):
                label, v = self.rows[j]
                if label:
                    self.rows[j] = (f"{m.group(1)} {label}", v)
        return True

    def grouped_columns(self, k: int) -> list[str] | None:
        """Column names from a two-level header: words that repeat g times at its end ("single double ratio",
        "NOx SO2 PM2.5 VOC"), one value column each, under g bracketed group names before them ("Duration (s)",
        "Energy consumed (Wh)"); the first group's leading word chunk names the row labels ("Model"). None
        unless the repeats cover exactly the k value columns and the group names count g."""
        words = " ".join(self.header).split()
        for g, sub in _repeated_tails(words, k):
            groups = bracket_parts(" ".join(words[:-k]))
            if len(groups) != g:
                continue
            first = header_chunks(groups[0])
            label = first[0] if len(first) > 1 else ""
            groups[0] = " ".join(first[1:]) if label else groups[0]
            return [label, *(f"{grp} {s}" for grp in groups for s in sub)]
        return None

    def name_numbers_fit(self) -> bool:
        """Version and size numbers at the start of a row's values given back to its name ("Llama | 3.1 8B
        4.31 0.71" is "Llama 3.1 8B" with two values) when the row has more values than the table's common
        width: the most common number of values in the rows whose values start with no such number. A name
        number is a model size ("8B", "1.3B", "560M") or a one-digit version ("3.1", "2.5"), at most
        MAX_NAME_NUMBERS of them; plain integers ("1 2 1" GPU counts, griggs2024) never move. Returns whether
        any row changed."""
        def lead(values: list[str]) -> int:
            n = 0
            while n < len(values) - 1 and _NAME_NUMBER.match(values[n]):
                n += 1
            return n
        rows = [v for _, v in self.rows if v]
        if not rows:
            return False
        widths = [len(v) for v in rows if not lead(v)]
        if widths and len(widths) * 3 >= len(rows):
            k = _most_common(widths)
        else:  # nearly every row starts with a name number (zschache2025 Table B2): when every row has the
            # same width without them, and half of them name a size, that is the width ("1.1 1.2 1.5" PUEs stay)
            bare = {len(v) - min(lead(v), MAX_NAME_NUMBERS) for v in rows}
            sized = sum(any(_NAME_NUMBER.match(t) and t[-1] in "BM" for t in v[:lead(v)]) for v in rows)
            if len(bare) != 1 or sized * 2 < len(rows):
                return False
            k = bare.pop()
        changed = False
        for i, (label, values) in enumerate(self.rows):
            extra = len(values) - k
            if 0 < extra <= MAX_NAME_NUMBERS and label and lead(values) >= extra:
                self.rows[i] = _name_takes(label, values, k)
                changed = True
        return changed

    def bracketed_names(self) -> list[str]:
        """The header cut after each bracket, when every piece ends in one (else [])."""
        return bracket_parts(" ".join(self.header))

    def bracketed_fit(self) -> bool:
        """Rows cut to the k value columns a bracketed header names (k >= 3), a row's extra leading values
        given back to its name; False (rows untouched) unless half the rows or more have k values or more,
        fewer than half the names then end in three numbers or more (k is too few: morrison2025
        Table 1, whose first bracketed name glues four columns), and no row name that would take a number
        ends in a bracket (griggs2024 Table 1: "On-demand Price ($/h) 0.7 1.01 ..." under four GPU names,
        one of them unbracketed)."""
        k = len(self.bracketed_names())
        rows = [v for _, v in self.rows if v]
        if k < 3 or sum(len(v) >= k for v in rows) < 0.5 * len(rows):
            return False
        if sum(len(v) > k + 2 for v in rows) * 2 >= len(rows):
            return False
        if any(len(v) > k and label.endswith(")") for label, v in self.rows):
            return False  # a name ending in its unit ("On-demand Price ($/h)") takes no number: a name is missing
        self.rows = [_name_takes(label, v, k) for label, v in self.rows]
        return True

    def key_column_fit(self) -> bool:
        """Rows with no names whose first values are distinct keys ("2016 1100575.41 ...": a year, han2024
        Tables 5 and 6) take that value as their name, when the header then names every value column and
        did not before (samsi2024 Table III's output lengths stay: its three header lines name no columns).
        Returns whether the rows changed."""
        named = [(label, v) for label, v in self.rows if v]
        if len(named) < 2 or any(label for label, _ in named) or self.names_every_column():
            return False
        keys = [v[0] for _, v in named]
        if len(set(keys)) != len(keys) or any(len(v) < 3 for _, v in named):
            return False
        before = self.rows
        self.rows = [(v[0], v[1:]) if v and not label else (label, v) for label, v in self.rows]
        if self.names_every_column():
            return True
        self.rows = before
        return False

    def value_width(self) -> int:
        """The most common number of values in a row (1 for a table without values)."""
        counts = [len(v) for _, v in self.rows if v]
        return _most_common(counts) if counts else 1

    def names_every_column(self) -> bool:
        """Whether `columns()` names each value column of the most common row width (2 or more), rather
        than one name for all the values."""
        k = self.value_width()
        return k > 1 and len(self.columns()) == k + 1

    def label_width(self) -> int:
        """Words in the row labels when (nearly) every row has the same number (else 0): then each
        word is a column of its own ("BERTbase V100x64" is Model and Hardware)."""
        counts = [len(label.split()) for label, v in self.rows if v and label]
        if len(counts) < 2:
            return 0
        w = _most_common(counts)
        return w if counts.count(w) >= 0.8 * len(counts) else 0

    def segmented_columns(self, k: int) -> list[str] | None:
        """Column names from a header whose words are glued into one run ("Model Hardware Power (W)
        Hours kWh ·PUE CO 2e Cloud compute cost"), or None when the chunks do not line up with the
        k value columns: one label column and k names, or one name per row-label word and k names."""
        chunks = header_chunks(" ".join(self.header))
        labels = [label.split() for label, v in self.rows if v and label]
        def hides_value(t: str) -> bool:  # a model's version or size in its name ("Llama 3.1 8B") hides none
            return _numeric(t) and not (self.rules.name_numbers and _NAME_NUMBER.match(t))
        if k < 2 or not chunks or sum(any(hides_value(t) for t in w) for w in labels) * 2 > len(labels):
            return None  # numbers in the row labels ("LLaMA-33B 64.7 GB"): a value column hides there
        if len(chunks) == k + 1:
            return chunks
        bracketed = bracket_chunks(" ".join(self.header))
        if len(bracketed) == k + 1:
            return bracketed
        extra = len(chunks) - k
        if extra > 1 and extra == self.label_width():
            return [" / ".join(chunks[:extra]), *chunks[extra:]]
        if self.rules.value_names and len(labels) == sum(1 for _, v in self.rows if v):
            names = _versions_joined(chunks)
            if len(names) == k and all(_name_like(n) for n in names):
                return ["", *names]  # the header names the value columns only ("H100 TPU v1 TPU v2 ...")
        return None

    def columns(self) -> list[str]:
        """Column names: label column first, then one per value column (or one for all values)."""
        k = self.value_width()
        if self.rules.grouped_header and (named := self.grouped_columns(k)):
            return named
        if self.rules.groups_above and (named := self.groups_above_columns(k)):
            return named
        words = [h.split() for h in self.header]
        if self.rules.key_column and k > 1 and len(words) > 1 and len(words[-1]) == k \
                and any(_cuts_bracket(w) for w in words[:-1]):
            # a title over the last line's k names ("Year Electricity Generation Emission(Metric Ton)" over
            # "NOx SO2 PM2.5 VOC", han2024 Table 5): its first word names the row labels, the rest spans them all
            first, *span = " ".join(self.header[:-1]).split()
            return [first, *(" ".join([*span, leaf]) for leaf in words[-1])]
        if words and all(len(w) in (k, k + 1) for w in words) and k > 1:
            # every header line names each value column (dodge2022: 'BERT BERT 6B ...' / 'finetune LM Transf. ...')
            cols = [""] * (k + 1)
            for w in words:
                for j, token in enumerate(w if len(w) == k + 1 else ["", *w]):
                    cols[j] = f"{cols[j]} {token}".strip()
            return cols
        flat = " ".join(self.header).split()
        flat = _joined_plus_minus(flat) if self.rules.segment_header else flat  # "Mean ± Std" names one column
        if len(flat) == k + 1:
            return flat
        named = self.segmented_columns(k) if self.rules.segment_header else None
        if named:
            return named
        if self.rules.segment_header and k > 1 and len(words) > 1 and len(words[0]) == k + 1 \
                and sum(len(w) for w in words[1:]) < k:
            return words[0]  # the first line names every column; the few words under it cannot be aligned
        if self.rules.bracketed_columns and k > 1 and len(names := self.bracketed_names()) == k:
            return ["", *names]  # the rows' names have no column name of their own
        if len(flat) >= 2:
            return [flat[0], " ".join(flat[1:])]
        return [flat[0] if flat else "", ""]

    def cells(self) -> list[list[str]]:
        """Each row as cells under `columns()`."""
        cols = self.columns()
        out = []
        for label, values in self.rows:
            if len(cols) == len(values) + 1:
                out.append([label, *values])
            else:
                out.append([label, " ".join(values), *[""] * max(0, len(cols) - 2)][: max(2, len(cols))])
        return out

    def markdown(self) -> str:
        """Caption line, then a compact markdown table."""
        cols = self.columns()
        esc = [[c.replace("|", "\\|") for c in row] for row in [cols, *self.cells()]]
        width = max(len(r) for r in esc)
        lines = [self.caption] if self.caption else []
        for i, row in enumerate(esc):
            lines.append("| " + " | ".join(row + [""] * (width - len(row))) + " |")
            if i == 0:
                lines.append("|" + "---|" * width)
        return "\n".join(lines).replace(UNIT_JOIN, " ")


# a token that continues the previous column name: a unit in brackets, a subscript ("CO 2e"), a
# piece after a middle dot ("kWh ·PUE"), a lower-case word ("Cloud compute cost") but not a unit
# with a capital inside ("kWh", "tCO2e")
_CONTINUES = re.compile(r"^(?:[(\[].*|\d+[a-z]*\)?|[·/%).,:;\]-].*|[a-z]+[a-z-]*\)?|of|for|per|at|in|to|&)$")


def _cuts_bracket(words: list[str]) -> bool:
    """Whether splitting a header line at spaces cuts a bracket apart ("Emission(Metric" "Ton)")."""
    return any(w.count("(") != w.count(")") for w in words)


def header_chunks(header: str) -> list[str]:
    """A glued header cut into column names: a new name starts at each word that does not continue
    the previous one (`_CONTINUES`); "(W)" in "Power (W)" and "Training(million L)" stay with theirs."""
    words = re.sub(r"(?<=[A-Za-z])\(", " (", header).split()
    chunks: list[str] = []
    depth = 0
    for w in words:
        if chunks and (depth > 0 or _CONTINUES.match(w)):
            chunks[-1] = f"{chunks[-1]} {w}"
        else:
            chunks.append(w)
        depth = max(0, depth + w.count("(") - w.count(")"))
    return chunks


def _repeated_tails(items: list[str], k: int) -> list[tuple[int, list[str]]]:
    """(g, sub) for each g of 2, 3, 4 whose sub-header ``sub`` (k / g items, two or more) repeats g times as the
    last k of ``items``, with something before them: the two-level headers of `Table.grouped_columns` (words)
    and `Table.groups_above_columns` (chunks)."""
    found = []
    for g in (2, 3, 4):
        n = k // g
        if k % g or n < 2 or len(items) <= k:
            continue
        if items[-k:] == items[-n:] * g:
            found.append((g, items[-n:]))
    return found


_KEYED = re.compile(r"^(\d+(?:\.\d+)?)\s+(\D\S*(?:\s+\D\S*)*)$")  # "8 Mélange": a key, then a name


def _name_like(chunk: str) -> bool:
    """A header chunk that can name a column alone: a letter or digit in it, at most three words, no prose
    ("#" and "draw; and estimate theoretical inference" cannot)."""
    words = chunk.split()
    return len(words) <= 3 and bool(re.search(r"[A-Za-z0-9]", chunk)) and ";" not in chunk \
        and not any(w.lower() in _PROSE_WORDS for w in words)


def _versions_joined(chunks: list[str]) -> list[str]:
    """Header chunks with a version ("v1", "v2.5") joined to the name before it ("TPU v1")."""
    out: list[str] = []
    for c in chunks:
        if out and re.fullmatch(r"v\d+(?:\.\d+)?", c):
            out[-1] = f"{out[-1]} {c}"
        else:
            out.append(c)
    return out


def bracket_parts(header: str) -> list[str]:
    """`header` cut after each bracket ("Power Usage (MWh) Water Consumption (kL)" -> two names), when
    every piece ends in one; else []."""
    parts = [p.strip() for p in re.split(r"(?<=\))\s+(?=[^\s(])", header) if p.strip()]
    return parts if parts and all(p.endswith(")") for p in parts) else []


def bracket_chunks(header: str) -> list[str]:
    """A header whose column names each end in a bracketed unit ("Model Energy Consumption(100
    input-300 output)(Wh) Energy Consumption(1k input-1k output)(Wh)") cut after each such bracket;
    the first word before the first name is the label column ("Model")."""
    parts = bracket_parts(header)
    if len(parts) < 2:
        return []
    first = parts[0].split(" ", 1)
    return [first[0], first[1], *parts[1:]] if len(first) == 2 and "(" not in first[0] else []


def _caption_end(lines: list[Line], i: int) -> int:
    """Index after the caption that starts at line i (wrapped lines that continue it)."""
    j = i + 1
    text = lines[i].text
    while j < len(lines) and j - i < MAX_CAPTION_LINES and lines[j].kind == "text":
        nxt = lines[j].text
        if text.rstrip().endswith(".") or TABLE_CAPTION.match(nxt) or FIGURE_CAPTION.match(nxt):
            break
        if not (text.endswith("-") or ((nxt[:1].islower() or nxt[:1] in "(,;)") and not row_like(nxt))):
            break
        text = nxt
        j += 1
    return j


def _capitals(text: str) -> bool:
    """A title line set in capitals ("BASED ON OUR ANALYTICAL MODEL"), not a header ("GPU Mem MBS")."""
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= 3 and sum(c.isupper() for c in letters) >= 0.8 * len(letters)


def _ieee_caption_end(lines: list[Line], i: int) -> int:
    """Index after an IEEE caption that starts with the bare "TABLE IV" line i: its first title line
    (even one ending in a number: "... (Model: OPT 2.7B)"), then the title lines in capitals (or after
    a hyphenated break) that follow it."""
    j = i + 1
    while j < len(lines) and j - i < MAX_CAPTION_LINES and lines[j].kind == "text":
        text = lines[j].text
        if TABLE_CAPTION.match(text) or IEEE_CAPTION.match(text) or FIGURE_CAPTION.match(text):
            break
        if j > i + 1 and (row_like(text) or not (_capitals(text) or lines[j - 1].text.endswith("-"))):
            break
        j += 1
    return j


def _run(lines: list[Line], start: int, step: int, taken: set[int], ieee: bool = False,
         dash_fillers: bool = False, nearest_header: bool = False, abbr: bool = False) -> list[int]:
    """Indices of the table lines next to a caption, walking from `start` by `step` (+1 down, -1 up):
    row-like lines and short label lines, until prose, another caption (``ieee``: a bare "TABLE IV"
    line too) or a used line. ``abbr``: tree.abbreviated_ends (`row_like`, `label_like`)."""
    out: list[int] = []
    j = start
    rows = 0
    while 0 <= j < len(lines) and j not in taken and len(out) < 400:
        ln = lines[j]
        if ln.kind != "text" or ln.heading or TABLE_CAPTION.match(ln.text) or FIGURE_CAPTION.match(ln.text):
            break
        if ieee and IEEE_CAPTION.match(ln.text):
            break
        if row_like(ln.text, dash_fillers, abbr):
            rows += 1
        elif not label_like(ln.text, abbreviations=abbr):
            break
        elif step > 0 and not rows and len(out) >= MAX_HEADER_LINES:
            return []  # a long run of short lines and no row: not a table
        elif step < 0 and rows and not _header_above(lines, j, taken, abbr):
            if nearest_header and out and row_like(lines[out[-1]].text, dash_fillers, abbr):
                out.append(j)  # the line right above the rows still heads them (tree.nearest_header)
            break  # going up: labels above the rows are the header, up to a prose line
        out.append(j)
        j += step
    # trailing labels (walking away from the caption) that no row follows are prose, not table
    if step > 0:
        while out and not row_like(lines[out[-1]].text, dash_fillers, abbr):
            out.pop()
    return sorted(out) if rows else []


def _after_gap(lines: list[Line], end: int, gap: int, taken: set[int], abbr: bool = False) -> int:
    """Where a table below a caption starts when up to `gap` lines sit between them that belong to
    neither: the caption's footnotes ("* One of the original OLMo 7B models ...", "12 The peak
    TeraFLOPS/second is 46 ...") and a page number (patterson2021 Table 4, morrison2025 Table 2).
    Returns `end` when no such gap is there."""
    j = end
    while j < len(lines) and j - end < gap and j not in taken and lines[j].kind == "text" \
            and not lines[j].heading and not TABLE_CAPTION.match(lines[j].text) \
            and not FIGURE_CAPTION.match(lines[j].text) and not IEEE_CAPTION.match(lines[j].text):
        text = lines[j].text.strip()
        if re.fullmatch(r"\d{1,3}", text) or not (row_like(text, True, abbr) or label_like(text, abbreviations=abbr)):
            j += 1
            continue
        break
    return j


def _header_above(lines: list[Line], j: int, taken: set[int], abbr: bool = False) -> bool:
    """Going up from the rows: is line j still header (only labels between it and the rows, and
    no more than MAX_HEADER_LINES of them)? A prose line above ends the table."""
    k = j
    n = 0
    while k >= 0 and k not in taken and lines[k].kind == "text" and label_like(lines[k].text, abbreviations=abbr) \
            and not row_like(lines[k].text, abbreviations=abbr):
        n += 1
        k -= 1
    return n <= MAX_HEADER_LINES


def _table_from(lines: list[Line], caption: str, idx: list[int], rules: TableRules,
                dash_fillers: bool = False) -> Table:
    """The table of lines ``idx`` read with ``rules``; ``dash_fillers``: rows may end in a lone "-"."""
    t = Table(caption, rules=rules)
    pending: list[str] = []
    starts: list[tuple[int, str]] = []  # with group_labels: (row, the label lines right above it)
    pieces = (unglued(lines[i].text) if rules.segment_header else [lines[i].text] for i in idx)
    for text in (piece for row in pieces for piece in row):
        if row_like(text, dash_fillers, rules.abbreviated_ends):
            label, values = split_row(text, join_plus_minus=rules.segment_header,
                                      durations=rules.bracketed_columns, joined=rules.joined_cells,
                                      abbreviations=rules.abbreviated_ends)
            if pending and rules.group_labels:  # a group's label or the start of this row's name: `_label_groups`
                starts.append((len(t.rows), " ".join(pending)))
            else:
                label = " ".join([*pending, label]).strip()
            t.rows.append((label, values))
            pending = []
        elif not t.rows:
            t.header.append(text)
        else:
            pending.append(text)  # a group label ('Training one model (GPU)') or a wrapped row label
    if pending:
        t.rows.append((" ".join(pending), []))
    if rules.bracketed_columns and not t.bracketed_fit():
        # the header does not confirm: as before
        return _table_from(lines, caption, idx, replace(rules, bracketed_columns=False), dash_fillers)
    if rules.name_numbers and not rules.bracketed_columns:
        t.name_numbers_fit()
    _label_groups(t, starts)
    if rules.carried_keys:
        t.carried_keys_fit()
    if rules.key_column:
        t.key_column_fit()
    return t


def _label_groups(t: Table, starts: list[tuple[int, str]]) -> None:
    """Label lines between a table's rows ("After Optimization Metrics following quantization ...") name a
    group of rows when the row below them has a name and a row name after them repeats one above them
    (khan2025 Table III lists the same five models before and after optimization): each row of the group, up
    to the next such lines, gets the group in brackets ("Qwen (After Optimization ...)"). Otherwise they
    begin the name of the row below them, as without tree.group_labels."""
    ends = [i for i, _ in starts[1:]] + [len(t.rows)]
    for (i, text), end in zip(starts, ends):
        above = {label for label, _ in t.rows[:i] if label}
        if i > 0 and t.rows[i][0] and any(label in above for label, _ in t.rows[i:end]):
            t.rows[i:end] = [(f"{label} ({text})" if label else text, values) for label, values in t.rows[i:end]]
        else:
            label, values = t.rows[i]
            t.rows[i] = (f"{text} {label}".strip(), values)


def _caption_side(lines: list[Line], abbr: bool = False) -> int | None:
    """Where this document's captions sit: -1 when its tables are above their captions, +1 below,
    None when undecided. Counted on the captions with rows on one side only, it settles the captions
    between two tables (zschache2025 captions every table below it, so "Table B2" sits between the
    rows of B2 and those of B3)."""
    votes = 0
    for i, ln in enumerate(lines):
        if ln.kind != "text" or not TABLE_CAPTION.match(ln.text):
            continue
        end = _caption_end(lines, i)
        cap = set(range(i, end))
        n_up = sum(row_like(lines[k].text, abbreviations=abbr) for k in _run(lines, i - 1, -1, cap, abbr=abbr))
        n_down = sum(row_like(lines[k].text, abbreviations=abbr) for k in _run(lines, end, 1, cap, abbr=abbr))
        if (n_up >= 2) != (n_down >= 2):
            votes += -1 if n_up >= 2 else 1
    return None if votes == 0 else -1 if votes < 0 else 1


def find_tables(lines: list[Line], rules: TableRules = TableRules()) -> list[Line]:
    """Lines with every captioned text table replaced by one `kind="table"` line (markdown with
    the caption first), placed where the table started; a caption next to a table that
    extraction already found is prepended to it. ``rules``: which reading rules are on (`TableRules`, each
    field says what its rule does; the default is all off but `segment_header`)."""
    original = lines
    if rules.unit_cells:
        lines = [Line(**{**ln.__dict__, "text": bound_units(ln.text)}) if ln.kind == "text" else ln for ln in lines]
    taken: set[int] = set()
    replace: dict[int, Line] = {}
    abbr = rules.abbreviated_ends
    side = _caption_side(lines, abbr)
    i = 0
    while i < len(lines):
        ln = lines[i]
        ieee = rules.ieee_captions and ln.kind == "text" and bool(IEEE_CAPTION.match(ln.text))
        if ln.kind != "text" or i in taken or not (ieee or TABLE_CAPTION.match(ln.text)):
            i += 1
            continue
        end = _ieee_caption_end(lines, i) if ieee else _caption_end(lines, i)
        caption = " ".join(lines[k].text for k in range(i, end))
        if ieee and end > i + 1:
            caption = f"{ln.text.strip()}: " + " ".join(lines[k].text for k in range(i + 1, end))
        caption = re.sub(r"(?<=[a-z])- (?=[a-z])", "", caption)  # 'com- mon' -> 'common'
        caption = re.sub(r"^T able\b", "Table", caption)  # searchable as the word the document wrote
        caption = caption.replace(UNIT_JOIN, " ")  # a caption is text, never cells (unit_cells)
        neighbours = [k for k in ((end,) if ieee else (i - 1, end)) if 0 <= k < len(lines) and k not in taken]
        found = next((k for k in neighbours if lines[k].kind == "table"), None)
        if found is not None:
            t = lines[found]
            replace[found] = Line(**{**t.__dict__, "text": f"{caption}\n{t.text}"})
            taken.update(range(i, end))
            taken.add(found)
            i = end
            continue
        cap_idx = set(range(i, end))
        above = [] if ieee else _run(lines, i - 1, -1, taken | cap_idx, rules.ieee_captions,
                                     nearest_header=rules.nearest_header, abbr=abbr)
        below = _run(lines, end, 1, taken | cap_idx, rules.ieee_captions, abbr=abbr)
        n_up = sum(row_like(lines[k].text, abbreviations=abbr) for k in above)
        dashes = False  # the rows below were found past a gap (their rows may end in a lone "-")
        if rules.caption_gap and not below and side != -1 and n_up < 2:
            start = _after_gap(lines, end, rules.caption_gap, taken | cap_idx, abbr)
            if start > end:
                below = _run(lines, start, 1, taken | cap_idx, rules.ieee_captions, dash_fillers=True, abbr=abbr)
                dashes = bool(below)
        n_down = sum(row_like(lines[k].text, dashes, abbr) for k in below)
        if min(n_up, n_down) >= 2 and side is not None:
            idx = above if side < 0 else below  # rows on both sides: the document's own habit decides
        else:
            idx = above if n_up >= n_down else below
        if len(idx) < 2:
            i = end
            continue
        past_gap = dashes and idx is below
        table = _table_from(lines, caption, idx, rules, dash_fillers=past_gap)
        if past_gap and not table.names_every_column():
            i = end  # past a gap, only a table whose header names its columns (patterson2021 Table 4 does not)
            continue
        first = lines[min(idx[0], i)]
        replace[min(idx[0], i)] = Line(text=table.markdown(), page=first.page, order=first.order, kind="table")
        taken.update(idx)
        taken.update(cap_idx)
        i = max(end, idx[-1] + 1)
    return [replace[k] if k in replace else ln for k, ln in enumerate(original) if k not in taken or k in replace]


def markdown_cells(line: str) -> list[str]:
    """The cells of one markdown table line; an escaped pipe (\\|) stays inside its cell."""
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def is_separator(cells: list[str]) -> bool:
    """Whether a markdown table line's cells are its header separator (| --- | :---: |)."""
    return all(re.fullmatch(r":?-{2,}:?", c) for c in cells)


def table_parts(markdown: str, cut_caption: bool = True) -> tuple[str, list[str], list[list[str]]]:
    """(caption cut at CAPTION_CHARS_IN_ROW unless not ``cut_caption``, header cells, data rows) of a
    (caption +) markdown table; a data row with no value is left out, so the rows line up with
    `table_row_sentences`."""
    rows: list[list[str]] = []
    caption = ""
    for line in markdown.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            if not rows and line:
                caption = f"{caption} {line}".strip()
            continue
        cells = markdown_cells(line)
        if is_separator(cells) or (rows and not any(cells)):
            continue  # the separator line, or an empty data row (the first line is the header, even empty)
        rows.append(cells)
    if not rows:
        return caption, [], []
    if cut_caption and len(caption) > CAPTION_CHARS_IN_ROW:
        cut = caption.rfind(" ", 0, CAPTION_CHARS_IN_ROW)
        caption = caption[: cut if cut > 0 else CAPTION_CHARS_IN_ROW] + " …"
    return caption, rows[0], [r for r in rows[1:] if any(r)]


def table_row_sentences(markdown: str) -> list[str]:
    """Each data row of a (caption +) markdown table as 'Caption | Header: value | Header: value'."""
    caption, header, rows = table_parts(markdown)
    out = []
    for r in rows:
        pairs = [f"{header[i]}: {v}" if i < len(header) and header[i] else v for i, v in enumerate(r) if v]
        out.append(" | ".join([caption, *pairs] if caption else pairs))
    return out


def table_block(markdown: str, row_indices: list[int]) -> str:
    """Some data rows of a table as one compact markdown block: the caption and the header once,
    then the rows (indices into `table_row_sentences`' list) in table order."""
    caption, header, rows = table_parts(markdown)
    lines = [caption] if caption else []
    if any(header):
        lines += ["| " + " | ".join(header) + " |"]
    lines += ["| " + " | ".join(rows[i]) + " |" for i in sorted(set(row_indices)) if 0 <= i < len(rows)]
    return "\n".join(lines)


_ABBREVIATION = re.compile(r"\(([A-Z][A-Za-z0-9&/+-]{0,9})\)")
_LINKING = {"and", "of", "the", "for", "in", "on", "with", "to", "a", "an", "&"}


def caption_abbreviations(caption: str) -> dict[str, str]:
    """Abbreviations a caption defines, 'Pause and Resume (P&R)' -> {'P&R': 'Pause and Resume'}:
    the fewest words before the brackets whose initials, linking words skipped, spell its letters.
    A row named by the abbreviation can then be matched with the words a question uses."""
    out: dict[str, str] = {}
    for m in _ABBREVIATION.finditer(caption):
        abbr = m.group(1)
        letters = [c.lower() for c in abbr if c.isalpha()]
        if len(letters) < 2 or sum(c.isupper() for c in abbr) < 2:
            continue
        words = re.findall(r"[A-Za-z][\w-]*|&", caption[: m.start()])
        for n in range(len(letters), min(len(words), 2 * len(letters)) + 1):
            span = words[-n:]
            initials = [w[0].lower() for w in span if w.lower() not in _LINKING]
            if initials == letters and span[0].lower() not in _LINKING:
                out[abbr] = " ".join(span)
                break
    return out
