"""Evidence kinds of labelled questions: where the gold answer comes from.

The WattBot labels say it in the explanation column ("Quote", "Table 3", "Figure 2",
"Math: 192 * 0.453592 = 87.09", "is_blank") and in the supporting materials (a table's
caption). Scores split by these kinds show what a reader cannot read yet (tables,
figures) or cannot do (arithmetic); a question can be of several kinds (a difference
of two table cells is `table` and `arithmetic`). Labels without such columns give
`quote` for every answerable question, so another corpus still gets a (one-kind) table.
"""
from __future__ import annotations

import re

import polars as pl

from stages.core.common.values import is_blank

KINDS = ("quote", "table", "figure", "arithmetic", "unanswerable")

_TABLE = re.compile(r"^\W*(table|tab\.)\s*([A-Z]?\d+|[IVX]+\b)?", re.I)
_FIGURE = re.compile(r"^\W*(figure|fig\.)", re.I)
_MATH = re.compile(r"\bmath\b|calculat|÷|→|≈|\d(\s*[a-z%]+)?\s*[*/×]\s*\(?\d|\d\s*[-+]\s*\(?\d[\d.\s()]*=", re.I)


def evidence_kinds(explanation: str | None, supporting: str | None, answer_value: str | None) -> list[str]:
    """The evidence kinds of one labelled question, in `KINDS` order."""
    if is_blank(answer_value or ""):
        return ["unanswerable"]
    expl, sup = (explanation or "").strip(), (supporting or "").strip()
    kinds = set()
    if _MATH.search(expl):
        kinds.add("arithmetic")
    if _TABLE.match(expl) or _TABLE.match(sup) or re.search(r"\btable\b", expl, re.I):
        kinds.add("table")
    if _FIGURE.match(expl) or _FIGURE.match(sup) or re.search(r"\bfig(ure|\.)", expl, re.I):
        kinds.add("figure")
    if not kinds or re.search(r"\bquote\b", expl, re.I):
        kinds.add("quote")
    return [k for k in KINDS if k in kinds]


def kinds_frame(labels: pl.DataFrame) -> pl.DataFrame:
    """(id, kind) pairs, one row per kind of each question (empty without an explanation column)."""
    if "explanation" not in labels.columns:
        rows = [(i, "unanswerable" if is_blank(v or "") else "quote")
                for i, v in zip(labels["id"], labels["answer_value"])]
    else:
        sup = labels["supporting_materials"] if "supporting_materials" in labels.columns else [None] * labels.height
        rows = [(i, k) for i, e, s, v in zip(labels["id"], labels["explanation"], sup, labels["answer_value"])
                for k in evidence_kinds(e, s, v)]
    return pl.DataFrame(rows, schema={"id": pl.String, "kind": pl.String}, orient="row")


def kind_table(verdicts: pl.DataFrame, labels: pl.DataFrame, column: str = "score") -> pl.DataFrame:
    """Per evidence kind: number of questions and mean score (kinds without questions left out)."""
    j = kinds_frame(labels).join(verdicts.select("id", column), on="id")
    return (j.group_by("kind").agg(pl.len().alias("n"), pl.col(column).mean().round(4).alias(column))
            .with_columns(pl.col("kind").replace_strict({k: i for i, k in enumerate(KINDS)}, return_dtype=pl.Int64)
                          .alias("_order")).sort("_order").drop("_order"))
