"""Under a document prior, a question that asks about a financial statement reaches that statement's page.

An analyst's question about a filing names a statement ("shown in the balance sheet", "the statement of
cash flows") or a metric whose line items one statement holds (capital expenditure: cash flows; working
capital, a quick ratio: the balance sheet; a margin: the income statement). Dense and keyword search
rarely find that page by themselves: a statement is a page of numbers whose row labels are not the
question's words ("Purchases of property, plant and equipment" for capex), and its title may be lost in
extraction (a title a PDF font split into "Balance Shee t", a title set as a picture, a running header).
So a page is recognised by its rows as much as by its title: a page that holds several of a statement's
signature line items ("total current assets", "net cash provided by operating activities") is that
statement, a title at its top adds to that. In each named filing, the best page of each statement the
question asks about (and the page after it when it goes on with the same statement: a balance sheet's
liabilities) gives its units that best match the question, which lead the keyword list.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

import polars as pl

# question words that ask for a statement, by the statement's kind: its names, then the metrics and
# line items an analyst computes from it (first kinds that match; a question may ask for several)
ASKED: dict[str, re.Pattern[str]] = {
    "cash flow": re.compile(
        r"cash\s*flows?\b|capex|capital\s+expenditure|free\s+cash|\bfcf\b|dividends?\s+paid|"
        r"(?:share|stock)\s+(?:repurchase|buyback)|depreciation|amortization|d&a|capital[-\s]+intensi|"
        r"(?:payout|retention)\s+ratio", re.I),
    "balance sheet": re.compile(
        r"balance\s+sheet|financial\s+position|pp&?e\b|ppne|property,?\s+plant|working\s+capital|"
        r"quick\s+ratio|current\s+ratio|total\s+assets|return\s+on\s+(?:average\s+)?assets|\broa\b|"
        r"inventor(?:y|ies)|receivables?|payables?|\bdpo\b|total\s+(?:debt|liabilities)|"
        r"(?:shareholders|stockholders)['’]?\s+equity|book\s+value|debt[-\s]to[-\s]equity|cash\s+and\s+cash|"
        r"cash\s+conversion\s+cycle|days\s+(?:of\s+)?(?:sales|inventory)", re.I),
    "income statement": re.compile(
        r"income\s+statement|statements?\s+of\s+(?:income|operations|earnings)|\bp&l\b|profit\s+and\s+loss|"
        r"revenues?\b|net\s+sales|margin|gross\s+profit|operating\s+income|net\s+(?:income|earnings)|"
        r"\beps\b|earnings\s+per\s+share|cost\s+of\s+(?:goods|sales|revenue)|\bcogs\b|ebitda?\b|"
        r"\bsg&a\b|interest\s+expense|effective\s+tax|capital[-\s]+intensi|(?:payout|retention)\s+ratio|"
        r"cash\s+conversion\s+cycle|days\s+(?:of\s+)?(?:sales|inventory)", re.I),
}
# the row labels each statement holds whatever the company (lower case, spaces squeezed out, so a word a
# PDF font split still matches); a page holding MIN_ROWS of them is that statement
SIGNATURE: dict[str, tuple[str, ...]] = {
    "cash flow": ("operatingactivities", "investingactivities", "financingactivities", "depreciation",
                  "netcashprovided", "netcashused", "purchasesofproperty", "capitalexpenditure",
                  "dividendspaid", "cashequivalentsatendof", "beginningofyear", "beginningofperiod",
                  "stock-basedcompensation", "share-basedcompensation", "deferredincometax"),
    "balance sheet": ("totalassets", "totalcurrentassets", "currentassets", "totalcurrentliabilities",
                      "currentliabilities", "totalliabilities", "retainedearnings", "accountspayable",
                      "inventories", "goodwill", "property,plantandequipment", "accumulateddepreciation",
                      "shareholders'equity", "stockholders'equity", "shareholders’equity", "stockholders’equity",
                      "accountsreceivable", "long-termdebt", "commitmentsandcontingencies"),
    "income statement": ("revenue", "netsales", "costofsales", "costofgoods", "costofrevenue", "grossprofit",
                         "grossmargin", "operatingincome", "incomefromoperations", "operatingprofit",
                         "incomebeforeincometaxes", "earningsbeforeincometaxes", "provisionforincometaxes",
                         "incometaxexpense", "netincome", "netearnings", "pershare", "diluted",
                         "weightedaverage", "sellingandadministrative", "selling,generalandadministrative",
                         "researchanddevelopment", "interestexpense"),
}
MIN_ROWS = 4  # signature rows a page must hold to be taken for a statement
# a statement is a page of numbers: a page of prose that names many line items (accounting policies, a
# discussion of results) holds few, so a page whose words are less than this share of numbers is none
MIN_NUMBER_SHARE = 0.1
TITLE_ROWS = 3  # a statement title on the page counts as this many signature rows
CONTINUED_ROWS = 3  # signature rows that make the next page the same statement's continuation
TITLE = {
    "cash flow": re.compile(r"statements?ofcash\s*flows?|cashflowsstatements?", re.I),
    "balance sheet": re.compile(r"balancesheets?|statements?offinancialposition|statements?offinancialcondition",
                                re.I),
    "income statement": re.compile(r"statements?of(?:consolidated)?(?:operations|income|earnings)(?!and"
                                   r"comprehensive)|incomestatements?", re.I),
}
# a statement's name as a question writes it; every row of that statement's page is labelled with its
# title, so within the page the name ranks no row above another (statement_words_apart)
STATEMENT_NAMES = re.compile(
    r"\b(?:consolidated\s+)?(?:statements?\s+of\s+(?:consolidated\s+)?(?:cash\s+flows?|income|operations|earnings|"
    r"financial\s+(?:position|condition))|cash\s+flows?\s+statements?|balance\s+sheets?|income\s+statements?)\b",
    re.I)
_SQUEEZE = re.compile(r"\s+")
_NUMBER = re.compile(r"^\(?[-–]?\$?\d[\d,.]*\)?%?$")


def asked_kinds(question: str) -> list[str]:
    """The statements a question asks about, by kind (ASKED), in ASKED's order."""
    return [kind for kind, rx in ASKED.items() if rx.search(question)]


def statement_words_apart(question: str) -> str:
    """The question without the statements' names, to rank the rows of those statements' pages: each row
    carries the statement's title, so the name matches them all alike and only lifts the shortest rows and
    the headers that repeat it ("Cash flows from operating activities"); the line items the question
    names then decide."""
    return _SQUEEZE.sub(" ", STATEMENT_NAMES.sub(" ", question)).strip()


def page_scores(texts: Iterable[str]) -> dict[str, int]:
    """Per statement kind, how much a page's text looks like it: its signature rows, plus TITLE_ROWS
    for a title of that statement."""
    page = _SQUEEZE.sub("", " ".join(texts).lower())
    out = {}
    for kind, rows in SIGNATURE.items():
        out[kind] = sum(r in page for r in rows) + (TITLE_ROWS if TITLE[kind].search(page) else 0)
    return out


def number_share(texts: Iterable[str]) -> float:
    """The share of a page's words (table cells apart) that are numbers."""
    words = " ".join(texts).replace("|", " ").split()
    return sum(bool(_NUMBER.match(w)) for w in words) / len(words) if words else 0.0


class StatementPages:
    """Per document, the pages of its statements (best page of each kind and its continuation), found
    once per document from the tree's paragraphs."""

    def __init__(self, nodes: pl.DataFrame) -> None:
        self._nodes = nodes  # read on the first question that asks about a statement (never under named_docs none)
        self._paras: pl.DataFrame | None = None
        self._pages: dict[str, dict[str, list[int]]] = {}

    def pages(self, doc_id: str) -> dict[str, list[int]]:
        """kind -> the 1-based pages of that statement in `doc_id` (none when no page looks like it)."""
        if doc_id not in self._pages:
            scores: dict[int, dict[str, int]] = {}
            if self._paras is None:
                self._paras = self._nodes.filter(pl.col("level") == "paragraph").select("doc_id", "page", "text")
            doc = self._paras.filter((pl.col("doc_id") == doc_id) & pl.col("page").is_not_null())
            for (page,), g in doc.group_by("page"):
                texts = [t or "" for t in g["text"].to_list()]
                if number_share(texts) >= MIN_NUMBER_SHARE:
                    scores[int(page)] = page_scores(texts)
            found: dict[str, list[int]] = {}
            for kind in SIGNATURE:
                best = max(sorted(scores), key=lambda p: scores[p][kind], default=None)  # ties: the earlier page
                if best is None or scores[best][kind] < MIN_ROWS:
                    continue
                found[kind] = [best]
                if scores.get(best + 1, {}).get(kind, 0) >= CONTINUED_ROWS:
                    found[kind].append(best + 1)
            self._pages[doc_id] = found
        return self._pages[doc_id]

    def node_ids(self, doc_ids: Iterable[str], kinds: list[str]) -> set[str]:
        """The ids of every node on the asked statements' pages of the documents."""
        wanted = [(d, p) for d in doc_ids for k in kinds for p in self.pages(d).get(k, [])]
        if not wanted:
            return set()
        keys = pl.DataFrame({"doc_id": [d for d, _ in wanted], "page": [p for _, p in wanted]},
                            schema={"doc_id": pl.String, "page": self._nodes.schema["page"]})
        on_pages = self._nodes.select("node_id", "doc_id", "page").join(keys, on=["doc_id", "page"])
        return set(on_pages["node_id"].to_list())
