"""FinanceBench scoring without an LLM: gold-filing and gold-page recall of the retrieved contexts,
numeric answers by value, the rest listed for judging by hand (bench/financebench.py runs it).

- **Pages.** labels.jsonl gives each evidence page 0-based (`page_0based`); the tree's nodes carry
  1-based PDF pages (`page`..`page_end`, extract numbers page i of the PDF as i + 1). A retrieved
  unit covers every page from its `page` to its `page_end` (a paragraph or table that runs over a
  page break covers both); a question's gold page is retrieved when a unit *of the gold filing*
  covers `page_0based + 1`. `page_any`: one of its evidence pages is covered (58 of the 81 questions
  have one, 23 have two); `page_all`: every one is.
- **Numbers.** A gold answer is numeric when, with `$`, `,`, `%` and a trailing unit word taken away,
  one number is left ("$1577.00", "24.26", "1.9%", "$8.70"); the others ("No, the operating margins
  ... declined") are listed for hand judging. A predicted value is right when it is within
  `REL_TOL` (1%) of the gold value or within half a unit of the gold's last written decimal
  (FinanceBench rounds: 1577 for "$1,577.00", 0.66 for "0.66"), also read as a fraction of the gold's
  percent (0.019 for "1.9%"). A blank or `is_blank` prediction is a refusal, counted apart.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import polars as pl

REL_TOL = 0.01
_NUM = re.compile(r"^\(?-?\d+(?:\.\d+)?\)?$")
_UNIT_WORDS = re.compile(r"\s*(?:usd|us\$|dollars|million|millions|billion|billions|percent|x|times)\s*$", re.I)
BLANK = {"", "is_blank", "none", "nan", "n/a"}


def read_labels(data: Path) -> list[dict[str, Any]]:
    """labels.jsonl rows (id, answer, question_type, doc, evidence[doc, page_0based, text])."""
    rows = []
    for i, line in enumerate((data / "labels.jsonl").read_text().splitlines(), start=1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise SystemExit(f"{data / 'labels.jsonl'}: line {i} is not JSON ({e})") from e
    return rows


def subset_docs(doc_ids: list[str], n: int) -> list[str]:
    """The fixed subset: the n document ids with the smallest SHA-1 of the id (0 or >= all: every id)."""
    if n <= 0 or n >= len(doc_ids):
        return sorted(doc_ids)
    return sorted(sorted(doc_ids, key=lambda d: hashlib.sha1(d.encode()).hexdigest())[:n])


def parse_number(text: str | None) -> tuple[float, int, bool] | None:
    """(value, decimals written, was a percent) of a one-number answer, else None."""
    s = (text or "").strip().rstrip(".")
    if not s:
        return None
    pct = "%" in s or re.search(r"percent", s, re.I) is not None
    s = _UNIT_WORDS.sub("", s.replace("$", "").replace(",", "").replace("%", "")).strip()
    if not _NUM.match(s):
        return None
    neg = s.startswith("(") or s.startswith("-")
    digits = s.strip("()-")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    value = float(digits)
    return (-value if neg else value), decimals, pct


def value_matches(pred: str | None, gold: tuple[float, int, bool]) -> bool:
    """The predicted value equals the gold one within REL_TOL or the gold's rounding (module docstring)."""
    p = parse_number(pred)
    if p is None:
        return False
    g, decimals, pct = gold
    tol = max(REL_TOL * abs(g), 0.5 * 10 ** -decimals)
    candidates = [p[0]] + ([p[0] * 100] if pct and not p[2] else [])
    return any(abs(c - g) <= tol + 1e-12 for c in candidates)


def covered_pages(units: pl.DataFrame, nodes: pl.DataFrame) -> dict[str, dict[str, set[int]]]:
    """question_id -> doc_id -> the 1-based pages its retrieved units cover (unit page..page_end)."""
    ctx = units.join(nodes.rename({"page": "node_page", "page_end": "node_page_end"}), on="node_id", how="left")
    out: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    for u in ctx.iter_rows(named=True):
        first = u["page"] if u.get("page") is not None else u["node_page"]
        last = u.get("page_end") if u.get("page_end") is not None else u["node_page_end"]
        pages = out[u["question_id"]][u["doc_id"]]
        if first is not None:
            pages.update(range(int(first), int(max(first, last or first)) + 1))
    return out


def recall(labels: list[dict[str, Any]], units: pl.DataFrame, nodes: pl.DataFrame) -> dict[str, Any]:
    """Gold-filing and gold-page recall (page_any, page_all) overall and per question_type, and per question."""
    cov = covered_pages(units, nodes)
    per_q: dict[str, dict[str, bool]] = {}
    for q in labels:
        got = cov.get(q["id"], {})
        gold_pages = [(e["doc"], int(e["page_0based"]) + 1) for e in q["evidence"]]
        hits = [p in got.get(d, set()) for d, p in gold_pages]
        per_q[q["id"]] = {"filing": q["doc"] in got, "page_any": any(hits), "page_all": all(hits)}
    out: dict[str, Any] = {"all": _rates(per_q.values())}
    by_type: dict[str, list[dict[str, bool]]] = defaultdict(list)
    for q in labels:
        by_type[q["question_type"]].append(per_q[q["id"]])
    out["per_type"] = {t: _rates(v) for t, v in sorted(by_type.items())}
    out["per_question"] = per_q
    return out


_LINE_ITEM = re.compile(r"line item named: (.+?)\.(?:\s|$)|as seen in the 10K, was: (.+?)\.(?:\s|$)")


def _letters(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower().replace("\u00e2", ""))  # "Â" of a mis-encoded no-break space


def line_item_names(justification: str) -> list[str]:
    """The statement lines a justification says its answer was read from, without their asides."""
    return [re.sub(r"\s*\(.*", "", a or b).strip() for a, b in _LINE_ITEM.findall(justification or "")]


def line_item_recall(labels: list[dict[str, Any]], units: pl.DataFrame) -> dict[str, float | int]:
    """Of the (question, line item) pairs the metrics-generated justifications name, the share whose
    name the question's context text holds (module docstring)."""
    text = {qid: _letters(" ".join(t for t in g["text"].to_list() if t))
            for (qid,), g in units.group_by("question_id")}
    pairs = [(q["id"], n) for q in labels if q.get("question_type") == "metrics-generated"
             for n in line_item_names(q.get("justification", "")) if _letters(n)]
    found = sum(_letters(n) in text.get(qid, "") for qid, n in pairs)
    return {"n": len(pairs), "found": round(found / len(pairs), 4) if pairs else 0.0}


def _rates(rows: Any) -> dict[str, float | int]:
    rows = list(rows)
    n = len(rows)
    r: dict[str, float | int] = {"n": n}
    for k in ("filing", "page_any", "page_all"):
        r[k] = round(sum(x[k] for x in rows) / n, 4) if n else 0.0
    return r


def judge_answers(labels: list[dict[str, Any]], sub: pl.DataFrame) -> dict[str, Any]:
    """Numeric answers by value, refusals apart, text answers listed for hand judging; per question_type."""
    pred = {r["id"]: r for r in sub.iter_rows(named=True)}
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    by_hand, numeric_rows = [], []
    for q in labels:
        p = pred.get(q["id"], {})
        value = str(p.get("answer_value") or "").strip()
        refused = value.lower() in BLANK
        gold = parse_number(q["answer"])
        cited = q["doc"].lower() in str(p.get("ref_id") or "").lower()
        for t in ("all", q["question_type"]):
            c = counts[t]
            c["n"] += 1
            c["cites_gold_filing"] += cited
            if refused:
                c["refused"] += 1
            elif gold is None:
                c["text_to_judge"] += 1
            elif value_matches(value, gold):
                c["numeric_right"] += 1
            else:
                c["numeric_wrong"] += 1
            c["numeric_gold"] += gold is not None
        row = {"id": q["id"], "type": q["question_type"], "gold": q["answer"], "pred_value": value,
               "pred_answer": str(p.get("answer") or ""), "refused": refused, "cites_gold_filing": cited}
        if gold is None and not refused:
            by_hand.append(row)
        elif gold is not None:
            numeric_rows.append({**row, "right": (not refused) and value_matches(value, gold)})
    return {"counts": {t: dict(c) for t, c in counts.items()}, "numeric": numeric_rows, "to_judge_by_hand": by_hand}
