"""Ensemble voting over answer members (KohakuRAG §4.4 and App. A.3).

Single runs vary with the context's order; a majority over several members is more robust.
Answers that differ by less than 0.1 % vote together, because the metric cannot tell them
apart. The answer decides first: the largest group of equal values wins (a tie goes to the
group holding the lowest member index), and its ref ids are those most of its members give.
Blank answers vote only when no member answered, ungrounded ones only when no answer is
grounded in its context.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import polars as pl

from stages.core.answer.normalize import values_equal
from stages.core.answer.record import Answer
from stages.core.common.artifacts import read_parquet


def _winner(groups: list[list[int]]) -> list[int]:
    """The group with most members; a tie goes to the group holding the lowest member index."""
    return min(groups, key=lambda g: (-len(g), g[0]))


def _voters(answers: list[Answer]) -> list[int]:
    """The members whose answers vote: blanks dropped when any member answered, ungrounded answers
    dropped when any answer is grounded."""
    members = list(range(len(answers)))
    if any(not a.is_blank for a in answers):
        members = [i for i in members if not answers[i].is_blank]
    if any(answers[i].grounded and not answers[i].is_blank for i in members):
        members = [i for i in members if answers[i].grounded]
    return members


def _biggest(groups: list[list[int]]) -> list[int]:
    return max(groups, key=len) if groups else []


def _value_groups(members: list[int], answers: list[Answer]) -> list[list[int]]:
    groups: list[list[int]] = []
    for i in members:
        for g in groups:
            if values_equal(answers[g[0]].answer_value, answers[i].answer_value):
                g.append(i)
                break
        else:
            groups.append([i])
    return groups


def _ref_groups(members: list[int], answers: list[Answer]) -> list[list[int]]:
    groups: dict[frozenset[str], list[int]] = {}
    for i in members:
        groups.setdefault(frozenset(answers[i].ref_id), []).append(i)
    return list(groups.values())


def vote_decided(answers: list[Answer], n: int) -> bool:
    """True when the first members' ``answers`` fix the vote over all ``n`` members, whatever
    the members not yet asked would answer (the answer stage skips those).

    It holds when more than half of the n members form the winning answer group *and* agree on
    its ref ids, with the filters already settled (some member answered, and one grounded):
    the remaining members can then only join groups or form smaller ones, never move the winner,
    its representative (the lowest index) or its ref ids.
    """
    if not any(a.grounded and not a.is_blank for a in answers):
        return False
    majority = n // 2 + 1
    values = _biggest(_value_groups(_voters(answers), answers))
    refs = _biggest(_ref_groups(values, answers))
    return len(values) >= majority and len(refs) >= majority and not answers[values[0]].is_blank


def vote_question(answers: list[Answer]) -> Answer:
    """One answer from the members' answers to one question (index = member order)."""
    if not answers:
        raise ValueError("vote_question needs at least one answer")
    members = _voters(answers)
    winners = _winner(_value_groups(members, answers))
    first = answers[winners[0]]
    if first.is_blank:
        return Answer(question_id=first.question_id)
    refs = answers[_winner(_ref_groups(winners, answers))[0]].ref_id
    return dataclasses.replace(first, ref_id=list(refs))


def vote_all(members: list[dict[str, Answer | None]], question_ids: list[str]) -> list[Answer]:
    """Vote every question in order; a member without an answer to a question counts as blank,
    one that was not asked it (None: the vote was decided without it) does not vote."""
    if not members:
        raise ValueError("vote_all needs at least one member")
    out = []
    for q in question_ids:
        answers = [a for m in members if (a := m.get(q, Answer(question_id=q))) is not None]
        out.append(vote_question(answers or [Answer(question_id=q)]))
    return out


def read_member(path: Path) -> dict[str, Answer | None]:
    """One ensemble member's answers (artifacts/answers/run_<i>.parquet)."""
    return member_answers(read_parquet(path, "answer"))


def member_answers(df: pl.DataFrame) -> dict[str, Answer | None]:
    """Answers keyed by question id from a member's rows (the answer stage's columns); None for a
    question the member was not asked because the earlier members had decided the vote."""
    return {
        r["question_id"]: None if r.get("skipped") else Answer(
            r["question_id"], r["answer"], r["answer_value"], r["answer_unit"], list(r["ref_id"] or []),
            r["explanation"], r["supporting_materials"], bool(r.get("grounded", True)))
        for r in df.iter_rows(named=True)
    }
