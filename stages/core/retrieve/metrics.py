"""Retrieval quality without an LLM, for labelled questions.

- gold-doc recall: a gold ref document is in the context;
- evidence recall: the gold answer value (in its common spellings) appears in the
  context, or most of the supporting quote's content words do;
- mean context tokens.
Questions whose gold answer is blank are left out of both recalls.
"""
from __future__ import annotations

import re

import polars as pl

from stages.core.common.values import is_blank, parse_number, ref_id_set
from stages.core.index.keywords import words as tokenize

QUOTE_COVERAGE = 0.6


def number_variants(x: float, scaled: bool = True) -> list[str]:
    """Spellings of a number as documents print it: 1287, 1,287, 1287.0, and for large
    values the same in thousands/millions/billions (5439000 -> 5.439, as in "5.439 million")."""
    out = set()
    if scaled and abs(x) >= 1000:
        for div in (1e3, 1e6, 1e9):
            s = format(x / div, ".15g")
            if abs(x / div) >= 1 and len(s) >= 3:  # "2" alone would match anything
                out |= set(number_variants(x / div, scaled=False))
    if float(x).is_integer():
        i = int(x)
        out |= {str(i), f"{i:,}", f"{i}.0"}
    else:
        s = format(x, ".15g")
        out |= {s, s.rstrip("0"), f"{x:,.{len(s.split('.')[-1])}f}" if "." in s else s}
    return sorted(out)


def evidence_variants(value: str) -> list[str]:
    """Strings whose presence in the context shows the answer value is there."""
    v = (value or "").strip()
    if is_blank(v):
        return []
    inner = v.strip("[]")
    parts = [p.strip() for p in inner.split(",")] if v.startswith("[") else [v]
    nums = [parse_number(p) for p in parts]
    if all(n is not None for n in nums):
        if len(parts) == 1 and nums[0] in (0.0, 1.0):
            return []  # True/False answers are 1/0: the digit says nothing
        return [s for n in nums for s in number_variants(n)]  # type: ignore[arg-type]
    return [v.lower()]


def _contains(text: str, needle: str) -> bool:
    if re.fullmatch(r"[\d.,]+", needle):
        return re.search(rf"(?<![\d.,]){re.escape(needle)}(?![\d]|[.,]\d)", text) is not None
    return needle in text


def evidence_found(answer_value: str, quote: str, context: str) -> bool:
    """True when the gold value or most of the supporting quote is in the context."""
    ctx = context.lower()
    variants = evidence_variants(answer_value)
    parts = [p.strip() for p in answer_value.strip("[]").split(",")] if answer_value.startswith("[") else [answer_value]
    if variants:
        if len(parts) > 1:
            groups = [number_variants(parse_number(p)) if parse_number(p) is not None else [p.lower()] for p in parts]
            if all(any(_contains(ctx, s.lower()) for s in g) for g in groups):
                return True
        elif any(_contains(ctx, s.lower()) for s in variants):
            return True
    words = set(tokenize(quote or "")) if not is_blank(quote) else set()
    if len(words) >= 3:
        ctx_words = set(tokenize(context))
        return len(words & ctx_words) / len(words) >= QUOTE_COVERAGE
    return False


def retrieval_metrics(labels: pl.DataFrame, contexts: pl.DataFrame) -> dict[str, float]:
    """Gold-doc recall, evidence recall and mean context tokens over labelled questions."""
    by_q = {qid: g for (qid,), g in contexts.group_by("question_id")}
    n = doc_hits = ev_hits = 0
    tokens = []
    for row in labels.iter_rows(named=True):
        ctx = by_q.get(row["id"])
        tokens.append(int(ctx["n_tokens"].sum()) if ctx is not None else 0)
        if is_blank(row.get("answer_value")):
            continue
        n += 1
        if ctx is None:
            continue
        gold = ref_id_set(row.get("ref_id"))
        docs = {d.lower() for d in ctx["doc_id"].to_list()}
        doc_hits += bool(gold & docs)
        ev_hits += evidence_found(row.get("answer_value", ""), row.get("supporting_materials", ""),
                                  "\n".join(ctx["text"].to_list()))
    return {
        "answerable_questions": n,  # the recalls are over these (gold answer not blank)
        "gold_doc_recall": round(doc_hits / n, 4) if n else 0.0,
        "evidence_recall": round(ev_hits / n, 4) if n else 0.0,
        "mean_context_tokens": round(sum(tokens) / len(tokens), 1) if tokens else 0.0,
    }
