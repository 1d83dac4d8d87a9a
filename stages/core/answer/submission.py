"""The Kaggle submission table: exactly the WattBot columns.

Blank answers write the literal `is_blank` in every answer field; ref_id and
ref_url as `['a','b']`; the answer unit comes from the questions file (where it has none, from the
answer: the unit the answer stage inferred from the question).
"""
from __future__ import annotations

import re
from collections.abc import Sequence

import polars as pl

from stages.core.answer.analyst_text import REFUSAL, cited
from stages.core.answer.normalize import format_ref_ids
from stages.core.answer.record import Answer
from stages.core.common.dataio import SUBMISSION_COLUMNS
from stages.core.common.values import BLANK

_NUMBER = re.compile(r"^-?[\d.,]+%?$")  # an answer that is a number needs no citation in its text


def _fmt_list(items: Sequence[str]) -> str:
    return "[" + ",".join(f"'{x}'" for x in items) + "]" if items else BLANK


def build_submission(questions: pl.DataFrame, answers: Sequence[Answer], urls: dict[str, str],
                     style: str = "wattbot") -> pl.DataFrame:
    """One row per question, in the questions file's order. ``style`` analyst (answer.style): a blank
    answer says so in words (analyst_text.REFUSAL), an answer in words names its filings, and an answer
    without a unit has an empty unit, not `is_blank`."""
    by_id = {a.question_id: a for a in answers}
    rows = []
    words = style == "analyst"
    for q in questions.iter_rows(named=True):
        a = by_id.get(q["id"]) or Answer(q["id"])
        # the questions file's unit; where it gives none, the unit the answer stage inferred (answer.infer_unit)
        unit = (q.get("answer_unit") or "").strip() or (a.answer_unit or "").strip() or BLANK
        unit = "" if words and unit == BLANK else unit  # an analyst's answer in words has no unit
        if a.is_blank:
            rows.append({"id": q["id"], "question": q["question"], "answer": REFUSAL if words else BLANK,
                         "answer_value": BLANK, "answer_unit": unit, "ref_id": BLANK, "ref_url": BLANK,
                         "supporting_materials": BLANK, "explanation": BLANK})
            continue
        refs = list(a.ref_id)
        answer = _one_line(a.answer) or a.answer_value
        if words and not _NUMBER.match(answer):
            answer = cited(answer, refs)
        rows.append({
            "id": q["id"], "question": q["question"], "answer": answer,
            "answer_value": a.answer_value, "answer_unit": unit, "ref_id": format_ref_ids(refs),
            "ref_url": _fmt_list([urls[r] for r in refs if urls.get(r)]),
            "supporting_materials": _one_line(a.supporting_materials) or BLANK,
            "explanation": _one_line(a.explanation).replace(BLANK, "").strip() if words else (
                _one_line(a.explanation) or BLANK),
        })
    return pl.DataFrame(rows, schema={c: pl.String for c in SUBMISSION_COLUMNS})


def _one_line(s: str) -> str:
    return " ".join((s or "").split())
