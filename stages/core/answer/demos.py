"""Worked examples for the typed reader, in a chat prefix that is identical for every question.

Each demonstration is a labelled question (from dev_QA, never test_Q) shown exactly
as a real question is: two numbered units (its own quote and another demo's quote as
a distractor), the question, and the JSON reply we want. Because the prefix never
changes within a run, the llama.cpp server evaluates it once and reuses it (prompt
cache), so the examples cost almost nothing per question.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from stages.core.answer.kinds import Kind, question_kind
from stages.core.answer.record import ContextBlock
from stages.core.answer.typed_prompt import user_message
from stages.core.common.dataio import InputError, read_csv_tolerant
from stages.core.common.values import BLANK, parse_ref_ids


def _reply(kind: Kind, value: str, pointer: int) -> str:
    """The reply we want for a demo, in the reader's schema (a numeric demo: its value as a JSON number)."""
    out: dict[str, object] = {"units": [pointer]}
    if kind == "true_false":
        out["answer"] = value.strip() == "1"
    elif kind == "text":
        out["answer"] = value
    elif kind == "range":
        lo, hi = (float(x) for x in value.strip("[]").split(","))
        out["low"], out["high"] = lo, hi
    else:
        number = float(value)
        out["value"] = int(number) if number.is_integer() else number
    return json.dumps(out)


def demo_messages(path: str | Path, ids: Sequence[str]) -> list[dict[str, str]]:
    """user/assistant turns for the demo questions `ids` of a labelled questions CSV."""
    if not ids:
        return []
    df = read_csv_tolerant(path, ("id", "question", "answer_value", "answer_unit", "ref_id", "supporting_materials"))
    rows = {r["id"]: r for r in df.iter_rows(named=True)}
    missing = [i for i in ids if i not in rows]
    if missing:
        raise InputError(f"{path}: answer.demos names ids that are not in the file: {missing}")
    picked = [rows[i] for i in ids]
    for r in picked:
        if (r["answer_value"] or BLANK) == BLANK or not (r["supporting_materials"] or "").strip():
            raise InputError(f"{path}: demo {r['id']} needs an answer and a supporting quote")
    turns: list[dict[str, str]] = []
    for k, r in enumerate(picked):
        other = picked[(k + 1) % len(picked)]
        gold = ContextBlock(parse_ref_ids(r["ref_id"] or "")[0], r["supporting_materials"].strip())
        distractor = ContextBlock(parse_ref_ids(other["ref_id"] or "")[0], other["supporting_materials"].strip())
        units = [gold, distractor] if k % 2 == 0 else [distractor, gold]
        unit = r["answer_unit"] or BLANK
        kind = question_kind(r["question"], unit)
        turns.append({"role": "user", "content": user_message(r["question"], unit, kind, units)})
        turns.append({"role": "assistant", "content": _reply(kind, r["answer_value"], units.index(gold) + 1)})
    return turns
