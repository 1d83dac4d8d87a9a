"""Ensemble voting over answer members (KohakuRAG §4.4 and App. A.3).

Single runs vary with sampling; a majority over several runs (and over other
models' submissions, ``vote.extra_submissions``) is more robust. Answers that
differ by less than 0.1 % vote together, because the metric cannot tell them apart.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import polars as pl

from stages.core.answer.normalize import normalize_value, values_equal
from stages.core.answer.record import Answer
from stages.core.common.artifacts import read_parquet
from stages.core.common.dataio import InputError, read_csv_tolerant
from stages.core.common.values import BLANK, parse_ref_ids

Strategy = Literal["answer_priority", "ref_priority", "independent", "union", "intersection"]
TieBreak = Literal["first", "shortest"]

SUBMISSION_REQUIRED = ("id", "answer_value", "ref_id")


@dataclass
class VoteParams:
    """The ``vote:`` section of params.yaml."""

    strategy: Strategy = "answer_priority"
    ignore_blank: bool = True  # drop blank answers when any member answered
    tie_break: TieBreak = "first"  # first: lowest member index; shortest: shortest value/fewest refs
    extra_submissions: list[str] = field(default_factory=list)
    prefer_grounded: bool = True  # drop ungrounded answers when any member's answer is grounded


def _winner(groups: list[list[int]], sizes: list[int], tie_break: TieBreak) -> list[int]:
    """The group with most members; ties go to the smallest size (if 'shortest'),
    then to the group holding the lowest member index."""
    best = min(
        range(len(groups)),
        key=lambda g: (-len(groups[g]), sizes[g] if tie_break == "shortest" else 0, groups[g][0]),
    )
    return groups[best]


def _vote_answers(members: list[int], answers: list[Answer], tie_break: TieBreak) -> list[int]:
    """Group members by value (first member is the group's representative); the winning group."""
    groups = _value_groups(members, answers)
    return _winner(groups, [len(answers[g[0]].answer_value) for g in groups], tie_break)


def _vote_refs(members: list[int], answers: list[Answer], tie_break: TieBreak) -> list[int]:
    """Group members by exact ref-id set; the winning group."""
    groups = _ref_groups(members, answers)
    return _winner(groups, [len(set(answers[g[0]].ref_id)) for g in groups], tie_break)


def _voters(answers: list[Answer], params: VoteParams) -> list[int]:
    """The members whose answers vote: blanks dropped when any member answered, ungrounded answers
    dropped when any answer is grounded (as the params say)."""
    members = list(range(len(answers)))
    if params.ignore_blank and any(not a.is_blank for a in answers):
        members = [i for i in members if not answers[i].is_blank]
    if params.prefer_grounded and any(answers[i].grounded and not answers[i].is_blank for i in members):
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


EARLY_STOP_STRATEGIES = ("answer_priority", "ref_priority", "independent")


def vote_decided(answers: list[Answer], n: int, params: VoteParams) -> bool:
    """True when the first members' ``answers`` fix the vote over all ``n`` members, whatever
    the members not yet asked would answer (ensemble.early_stop skips those).

    It holds when more than half of the n members form the winning answer group *and* agree on
    its ref ids, with the filters already settled (some member answered, and one grounded
    when prefer_grounded): the remaining members can then only join groups or form smaller
    ones, never move the winner, its representative (the lowest index) or its ref ids.
    union and intersection combine every winner's refs, and extra submissions are voters this
    count does not see, so for those it is never True.
    """
    if params.strategy not in EARLY_STOP_STRATEGIES or params.extra_submissions:
        return False
    if params.prefer_grounded and not any(a.grounded and not a.is_blank for a in answers):
        return False
    majority = n // 2 + 1
    voters = _voters(answers, params)
    if params.strategy == "ref_priority":
        refs = _biggest(_ref_groups(voters, answers))
        values = _biggest(_value_groups(refs, answers))
    else:
        values = _biggest(_value_groups(voters, answers))
        refs = _biggest(_ref_groups(values if params.strategy == "answer_priority" else voters, answers))
    return len(values) >= majority and len(refs) >= majority and not answers[values[0]].is_blank


def vote_question(answers: list[Answer], params: VoteParams) -> Answer:
    """One answer from the members' answers to one question (index = member order)."""
    if not answers:
        raise ValueError("vote_question needs at least one answer")
    members = _voters(answers, params)
    tie = params.tie_break
    if params.strategy == "ref_priority":
        winners = _vote_answers(_vote_refs(members, answers, tie), answers, tie)
    else:
        winners = _vote_answers(members, answers, tie)
    first = answers[winners[0]]
    if first.is_blank:
        return Answer(question_id=first.question_id)
    if params.strategy == "independent":
        refs = answers[_vote_refs(members, answers, tie)[0]].ref_id
    elif params.strategy == "union":
        refs = list(dict.fromkeys(r for i in winners for r in answers[i].ref_id))
    else:  # answer_priority, ref_priority, intersection
        refs = answers[_vote_refs(winners, answers, tie)[0]].ref_id
        if params.strategy == "intersection":
            common = [r for r in first.ref_id if all(r in answers[i].ref_id for i in winners)]
            refs = common or refs
    return dataclasses.replace(first, ref_id=list(refs))


def vote_all(members: list[dict[str, Answer | None]], question_ids: list[str], params: VoteParams) -> list[Answer]:
    """Vote every question in order; a member without an answer to a question counts as blank,
    one that was not asked it (None: ensemble.early_stop) does not vote."""
    if not members:
        raise ValueError("vote_all needs at least one member")
    out = []
    for q in question_ids:
        answers = [a for m in members if (a := m.get(q, Answer(question_id=q))) is not None]
        out.append(vote_question(answers or [Answer(question_id=q)], params))
    return out


def _cell(row: dict[str, str | None], column: str) -> str:
    return (row.get(column) or "").strip() or BLANK


def read_submission_answers(path: str | Path) -> dict[str, Answer]:
    """Answers from another Kaggle submission CSV, keyed by question id, values
    normalised like the members' so that they group with them."""
    df = read_csv_tolerant(path, SUBMISSION_REQUIRED)
    out: dict[str, Answer] = {}
    for row_no, row in enumerate(df.iter_rows(named=True), start=2):
        qid = (row["id"] or "").strip()
        if not qid:
            raise InputError(f"{path}: row {row_no}: column id is empty")
        if qid in out:
            raise InputError(f"{path}: row {row_no}: column id repeats {qid!r}")
        unit = _cell(row, "answer_unit")
        out[qid] = Answer(
            question_id=qid,
            answer=_cell(row, "answer"),
            answer_value=normalize_value(row["answer_value"], unit),
            answer_unit=unit,
            ref_id=parse_ref_ids(row["ref_id"] or ""),
            explanation=_cell(row, "explanation"),
            supporting_materials=_cell(row, "supporting_materials"),
        )
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
