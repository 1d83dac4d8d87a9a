"""Document cards: what identifies each document, and which documents a question names.

A card per document, built at index time and stored with the index (`doc_cards.json`, `CARDS`):
- from metadata.csv: the title, the year, the type, the author surnames of the citation
  (first author apart) and every column beyond the standard ones (`company`, `ticker`,
  `fiscal_period`, `form_type`, ...), sorted by what its name or values say into names,
  periods (years, fiscal years, quarters) and document types;
- from the document itself: the title block (the first page's front matter, e.g. the
  company name and "FORM 10-K ... fiscal year ended September 28, 2024" of a filing).

`name_docs` decides from a question which documents it names, in three steps:
1. name cues: an author surname written as in the citation ("Dodge et al." counts the
   first author only), a metadata name value ("Apple" for `company: Apple Inc.`), two or
   more distinctive title words or the whole title, distinctive title-block words;
2. qualifiers narrow the named candidates: a year / fiscal year, a quarter, a document
   type ("10-K", "annual report"); a candidate with another value of that kind is dropped
   when some candidate matches (a qualifier no candidate matches narrows nothing);
3. the documents within `share` of the best score are named, each with a confidence.
Every cue is weighted by how rare it is among the cards, so words that many titles share
("AI", "energy", "model") or boilerplate every filing's first page has name nothing, and a
year or a document type alone never names a document.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import polars as pl

from stages.core.common import storage
from stages.core.index.keywords import tokenize

CARDS = "doc_cards.json"  # the cards' file in an index directory (write_cards, read_namer)
STANDARD_COLUMNS = ("id", "type", "title", "year", "citation", "url")

# document types and how questions say them (lower case), by the canonical type; extend here
DOC_TYPES: dict[str, tuple[str, ...]] = {
    "10-k": ("10-k", "10k", "annual report", "annual filing"),
    "10-q": ("10-q", "10q", "quarterly report", "quarterly filing"),
    "8-k": ("8-k", "8k", "current report", "earnings release", "press release"),
    "20-f": ("20-f",),
    "40-f": ("40-f",),
    "proxy": ("def 14a", "proxy statement"),
}
# words after a company name that a question leaves out ("Apple Inc." -> "apple")
NAME_SUFFIXES = frozenset({"inc", "incorporated", "corp", "corporation", "co", "company", "ltd", "limited", "plc",
                           "llc", "lp", "sa", "ag", "nv", "se", "holdings", "group", "the"})
QUARTER_WORDS = {"first": "q1", "second": "q2", "third": "q3", "fourth": "q4",
                 "1st": "q1", "2nd": "q2", "3rd": "q3", "4th": "q4"}
# metadata column names that hold a period or a document type (other extra columns are names)
PERIOD_COLUMN = re.compile(r"year|period|quarter|fiscal|date|fy", re.I)
TYPE_COLUMN = re.compile(r"form|type|kind", re.I)

# weights of the cues (see the module docstring); RARE: an idf share above which a title word is distinctive
W_FIRST_AUTHOR, W_AUTHOR, W_NAME, W_BLOCK, W_YEAR, W_PERIOD, W_TYPE = 2.0, 1.0, 2.0, 0.5, 1.0, 1.0, 0.5
RARE, TITLE_MIN, NAME_MIN, STRONG = 0.6, 1.5, 0.5, 2.0
UNIQUE = 0.99  # idf share of a word one document's text alone holds (only with text frequencies)

_YEAR = re.compile(r"(?<!\d)((?:19|20)\d\d)(?!\d)")
_FY = re.compile(r"\b(?:FY|fiscal(?:\s+year)?)\s*'?(\d{4}|\d{2})\b", re.I)
_QUARTER = re.compile(r"\bQ([1-4])\b|\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+(?:fiscal\s+)?quarter\b", re.I)
# a question about what is expected ("expected to accelerate in FY2023", "guidance", "expect to pay in the
# future") asks for a forecast: one for fiscal year Y is given before Y starts, so the filings of Y - 1 state
# it too, and with no year the latest filing states the current one; "as of <period>" anchors the question
# to the filing of that period instead
_EXPECT = re.compile(r"\b(?:expect(?:s|ed|ing|ation|ations)?|guidance|outlook|forecasts?|anticipat\w*)\b|"
                     r"\bin\s+the\s+future\b|\bgoing\s+forward\b", re.I)
_AS_OF = re.compile(r"\bas\s+of\b", re.I)
_ET_AL = re.compile(r"\s*(?:,\s*)?et\s+al\b", re.I)
# a short form written in capitals in a question ("JPM", "MGM", "J&J", "JnJ"): two or more capitals, no digit
_CAPS = re.compile(r"(?<![\w&])(?=(?:[a-z&]*[A-Z]){2})[A-Za-z&]{2,6}(?![\w&])")


@dataclass
class DocCard:
    """What identifies one document."""

    doc_id: str
    title: str = ""
    year: str = ""
    type: str = ""
    authors: list[str] = field(default_factory=list)  # citation surnames, first author first
    fields: dict[str, str] = field(default_factory=dict)  # metadata columns beyond the standard ones
    title_block: str = ""  # the first page's front matter

    def names(self) -> list[str]:
        """Normalised name values of the extra metadata columns ('Apple Inc.' -> 'apple')."""
        return [n for col, v in self.fields.items()
                if not PERIOD_COLUMN.search(col) and not TYPE_COLUMN.search(col) and (n := norm_name(v))]

    def years(self) -> set[str]:
        out = set(_YEAR.findall(self.year or ""))
        for col, v in self.fields.items():
            if PERIOD_COLUMN.search(col):
                out |= periods(v)[0]
        return out

    def quarters(self) -> set[str]:
        return {q for col, v in self.fields.items() if PERIOD_COLUMN.search(col) for q in periods(v)[1]}

    def types(self) -> set[str]:
        vals = [self.type] + [v for col, v in self.fields.items() if TYPE_COLUMN.search(col)]
        return {t for v in vals for t in doc_types(v)} | {v.strip().lower() for v in vals if v.strip()}


@dataclass
class NamedDoc:
    """A document a question names, how sure we are (0..1] and the cues that matched."""

    doc_id: str
    confidence: float
    cues: list[str]


def norm_name(text: str) -> str:
    """Lower-cased words of a name without punctuation and corporate suffixes."""
    ws = re.findall(r"[a-z0-9&]+", (text or "").lower().replace("'s", ""))
    while ws and ws[-1] in NAME_SUFFIXES:
        ws.pop()
    while ws and ws[0] == "the":
        ws.pop(0)
    return " ".join(ws)


def short_forms(name: str) -> set[str]:
    """Short forms of a normalised company name that a question writes in capitals: a prefix of
    three or more letters of its first word or of the name without spaces ('jpmorgan' -> 'jpm',
    'mgm resorts' -> 'mgm'), and the initials of a name of two or more words, '&' read as itself or
    'n' ('johnson & johnson' -> 'j&j', 'jnj'; 'lockheed martin' -> 'lm' is too short: three letters at least)."""
    words = name.split()
    if not words:
        return set()
    squashed = "".join(w for w in words if w != "&")
    out = {squashed[:k] for k in range(3, min(len(squashed), 6) + 1)}
    initials = ["&" if w == "&" else w[0] for w in words]
    if len([w for w in words if w != "&"]) >= 2:
        out |= {"".join(initials), "".join("n" if c == "&" else c for c in initials)}
    return {f for f in out if len(f) >= 3}


def periods(text: str) -> tuple[set[str], set[str]]:
    """(years, quarters) a text states: '2024', 'FY2024', "fiscal '24", 'Q3', 'third quarter'."""
    years = set(_YEAR.findall(text or ""))
    for m in _FY.finditer(text or ""):
        y = m.group(1)
        years.add(y if len(y) == 4 else f"20{y}")
    quarters = {f"q{m.group(1)}" if m.group(1) else QUARTER_WORDS[m.group(2).lower()]
                for m in _QUARTER.finditer(text or "")}
    return years, quarters


def doc_types(text: str) -> set[str]:
    """Canonical document types a text names ('annual report' -> 10-k)."""
    low = f" {(text or '').lower()} "
    return {t for t, aliases in DOC_TYPES.items()
            if any(re.search(rf"(?<![\w-]){re.escape(a)}(?![\w-])", low) for a in aliases)}


def surnames(citation: str, doc_id: str = "") -> list[str]:
    """Author surnames of a citation 'A. Name, B. Other (2022). Title...' (the names before the
    year, or before a URL when the year is missing). When the doc id starts with a word of the
    author list ('smith2025' in 'Jane Smith John Doe, ...': a list without commas), that word is the first author."""
    authors = re.split(r"\(\d{4}\)|https?://", citation or "")[0]
    out = []
    for a in re.split(r",|\band\b|&", authors):
        parts = a.strip(" .").split()
        if parts and len(parts[-1].strip(".")) >= 2 and parts[-1][0].isupper():
            out.append(parts[-1].strip("."))
    stem = re.match(r"[a-z]+", (doc_id or "").lower())
    if stem and len(stem.group(0)) >= 2:
        first = next((w for w in re.findall(r"[\w'-]+", authors) if w.lower() == stem.group(0)), None)
        if first:
            out = [first] + [a for a in out if a != first]
    return out


def build_cards(metadata: pl.DataFrame, nodes: pl.DataFrame | None = None, block_chars: int = 300) -> list[DocCard]:
    """A card per metadata row; the title block is the first page's front-matter paragraphs
    (up to `block_chars` characters; 0 = none)."""
    blocks: dict[str, str] = {}
    if nodes is not None and block_chars > 0 and "is_front_matter" in nodes.columns:
        front = nodes.filter((pl.col("level") == "paragraph") & pl.col("is_front_matter").fill_null(False))
        for (doc,), g in front.group_by("doc_id", maintain_order=True):
            blocks[doc] = " ".join(g["text"].to_list())[:block_chars]
    extra = [c for c in metadata.columns if c not in STANDARD_COLUMNS]
    cards = []
    for r in metadata.iter_rows(named=True):
        cards.append(DocCard(
            doc_id=r["id"], title=r.get("title") or "", year=r.get("year") or "", type=r.get("type") or "",
            authors=surnames(r.get("citation") or "", r["id"]),
            fields={c: str(r[c]) for c in extra if r.get(c) not in (None, "")},
            title_block=blocks.get(r["id"], ""),
        ))
    return cards


def word_docs(cards: list[DocCard], doc_tokens: dict[str, set[str]]) -> dict[str, int]:
    """For every title and title-block word of the cards, how many documents' text holds it
    (`doc_tokens`: the tokens of each document's keyword units)."""
    vocab = {w for c in cards for w in _title_words(f"{c.title} {c.title_block}")}
    return {w: sum(w in toks for toks in doc_tokens.values()) for w in sorted(vocab)}


def write_cards(path: Path, cards: list[DocCard], docs_with: dict[str, int], n_docs: int) -> None:
    """`doc_cards.json`: the cards, and the text document frequency of their words."""
    data = {"n_docs": n_docs, "word_docs": docs_with, "cards": [asdict(c) for c in cards]}
    path.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


# document types whose statements give a whole fiscal year per column (a quarterly report's columns are quarters)
ANNUAL_TYPES = frozenset({"10-k", "20-f", "40-f"})  # canonical (DOC_TYPES): "annual report" is a 10-k


def annual_years(cards: Sequence[DocCard]) -> dict[str, int]:
    """The fiscal year of each annual report among the cards (a card of an annual type naming exactly one
    year): an annual report's statements state that year first and the years before it after."""
    out: dict[str, int] = {}
    for c in cards:
        years = c.years()
        if len(years) == 1 and c.types() & ANNUAL_TYPES:
            out[c.doc_id] = int(next(iter(years)))
    return out


def read_namer(path: Path | str, share: float = 0.75) -> DocNamer:
    """The DocNamer of an index directory's `doc_cards.json`, a path or an s3:// URI (none: a namer that
    names nothing)."""
    if not storage.exists(path):
        return DocNamer([], share=share)
    data = json.loads(storage.read_text(path))
    return DocNamer([DocCard(**c) for c in data["cards"]], data.get("word_docs"), data.get("n_docs"), share)


def _title_words(text: str) -> set[str]:
    return {t for t in tokenize(text) if not _YEAR.fullmatch(t) and len(t) > 1}


class DocNamer:
    """Which documents a question names, from the cards (see the module docstring).

    A title or title-block word weighs by how few documents hold it: in their text when
    `word_docs` (word -> documents whose text holds it, of `n_docs`) is given, else in the
    cards' titles. Measured on WattBot dev: title idf alone let "data center" name the one
    paper whose title says it; in the text, nearly every document says it."""

    def __init__(self, cards: list[DocCard], word_docs: dict[str, int] | None = None, n_docs: int | None = None,
                 share: float = 0.75) -> None:
        self.cards = cards
        self.share = share
        self._title = [_title_words(c.title) for c in cards]
        self._block = [_title_words(c.title_block) - t - {a.lower() for a in c.authors}
                       for c, t in zip(cards, self._title)]
        self._names = [c.names() for c in cards]
        self._short = [{f: nm for nm in ns for f in short_forms(nm)} for ns in self._names]
        self._years = [c.years() for c in cards]
        self._quarters = [c.quarters() for c in cards]
        self._types = [c.types() for c in cards]
        n = len(cards)

        def idf(d: int, total: int = n) -> float:
            return math.log(1 + total / max(1, d)) / math.log(1 + total) if total else 0.0
        self._text_df = bool(word_docs is not None and n_docs and n_docs > 1)
        if word_docs is not None and n_docs:
            self._idf = {w: idf(word_docs.get(w, 1), n_docs) for ws in self._title + self._block for w in ws}
            self._idf_block = self._idf
        else:
            df = Counter(w for ws in self._title for w in ws)
            df_block = Counter(w for ws in self._block for w in ws)
            self._idf = {w: idf(d) for w, d in df.items()}
            self._idf_block = {w: idf(d) for w, d in df_block.items()}
        df_names = Counter(x for ns in self._names for x in set(ns))
        df_auth = Counter(a for c in cards for a in set(c.authors))
        self._idf_names = {x: idf(d) for x, d in df_names.items()}
        self._idf_auth = {a: idf(d) for a, d in df_auth.items()}
        self._author_re = {a: re.compile(rf"(?<![\w-]){re.escape(a)}(?![\w-])") for a in df_auth}

    def name(self, question: str, share: float | None = None) -> list[NamedDoc]:
        """The documents `question` names, best first (empty: it names none); `share` overrides
        the namer's: the documents within that share of the best score are named."""
        if not self.cards or not question.strip():
            return []
        q_words = _title_words(question)
        q_name = f" {norm_name(question)} "
        q_caps = {m.group(0).lower() for m in _CAPS.finditer(question)}
        q_years, q_quarters = periods(question)
        q_fiscal = {y if len(y) == 4 else f"20{y}" for y in _FY.findall(question)}
        forecast = _EXPECT.search(question) is not None and _AS_OF.search(question) is None
        if forecast and q_fiscal:
            before = {str(int(y) - 1) for y in q_fiscal}
            q_fiscal, q_years = q_fiscal | before, q_years | before
        q_types = doc_types(question)
        scores: dict[int, float] = {}
        cues: dict[int, list[str]] = {}
        author_hits = {a: [m.end() for m in rx.finditer(question)] for a, rx in self._author_re.items()}
        for i, c in enumerate(self.cards):
            s, why = 0.0, []
            for k, a in enumerate(c.authors):
                ends = author_hits.get(a) or []
                if not ends:
                    continue
                et_al = any(_ET_AL.match(question, e) for e in ends)
                if k == 0 or not et_al:  # "Dodge et al." names the first author only
                    s += (W_FIRST_AUTHOR if k == 0 else W_AUTHOR) * self._idf_auth[a]
                    why.append(f"author:{a}")
            for nm in set(self._names[i]):
                if f" {nm} " in q_name:
                    s += W_NAME * self._idf_names[nm]
                    why.append(f"name:{nm}")
            for short in sorted(q_caps & self._short[i].keys()):
                nm = self._short[i][short]
                if not any(c.startswith("name:") for c in why):  # the full name already counted
                    s += W_NAME * self._idf_names[nm]
                    why.append(f"name:{nm}~{short}")
            matched = self._title[i] & q_words
            mass = sum(self._idf[w] for w in matched if self._idf[w] >= RARE)
            whole = len(self._title[i]) >= 2 and matched == self._title[i]
            # a title word no other document's text holds ('booktabs', 'JetMoE') names the document alone
            unique = self._text_df and any(self._idf[w] >= UNIQUE and len(w) >= 4 and not w.isdigit() for w in matched)
            if mass >= TITLE_MIN or whole:
                s += max(mass, TITLE_MIN)
                why.append("title:" + " ".join(sorted(matched)))
            elif unique:
                s += mass
                why.append("title:" + " ".join(sorted(matched)))
            bmatched = self._block[i] & q_words
            bmass = sum(self._idf_block[w] for w in bmatched if self._idf_block[w] >= RARE)
            if bmass >= TITLE_MIN:
                s += W_BLOCK * bmass
                why.append("block:" + " ".join(sorted(bmatched)))
            if s >= NAME_MIN:
                scores[i], cues[i] = s, why
        if not scores:
            return []
        cand = set(scores)
        # a fiscal year, a quarter or a document type narrows: candidates with another value go
        for asked, have in ((q_fiscal, self._years), (q_quarters, self._quarters), (q_types, self._types)):
            match = {i for i in cand if have[i] & asked} if asked else set()
            if match:
                cand = {i for i in cand if i in match or not have[i]}
        # a fiscal year without a quarter asks for the whole year: the annual filing before a quarterly one
        if q_fiscal and not q_quarters and any(not self._quarters[i] and self._years[i] & q_fiscal for i in cand):
            cand = {i for i in cand if not self._quarters[i]}
        # then every matching qualifier adds to the score (a plain year too: it may be the content's)
        for asked, have, w, kind in ((q_years, self._years, W_YEAR, "year"),
                                     (q_quarters, self._quarters, W_PERIOD, "quarter"),
                                     (q_types, self._types, W_TYPE, "type")):
            for i in cand:
                if have[i] & asked:
                    scores[i] += w
                    cues[i].append(f"{kind}:{','.join(sorted(have[i] & asked))}")
        if forecast and not q_years and not q_quarters:
            latest = max((y for i in cand for y in self._years[i]), default=None)
            newest = {i for i in cand if latest in self._years[i]}
            for i in newest if len(newest) < len(cand) else ():  # only where the candidates' years differ
                scores[i] += W_YEAR
                cues[i].append(f"latest:{latest}")
        best = max(scores[i] for i in cand)
        cut = (self.share if share is None else share) * best
        keep = sorted((i for i in cand if scores[i] >= cut), key=lambda i: (-scores[i], i))
        return [NamedDoc(self.cards[i].doc_id, round(min(1.0, scores[i] / STRONG) * scores[i] / best, 4), cues[i])
                for i in keep]
