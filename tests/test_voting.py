"""Ensemble voting: the answer first, its refs from its group, blank and ungrounded answers, ties, early stop."""
from __future__ import annotations

import pytest

from stages.core.answer.record import Answer
from stages.core.answer.voting import vote_all, vote_decided, vote_question


def ans(value: str, refs: list[str], note: str = "", qid: str = "q1") -> Answer:
    """An answer whose explanation tells which member it came from."""
    return Answer(question_id=qid, answer=value, answer_value=value, answer_unit="W", ref_id=refs,
                  explanation=note or value, supporting_materials=f"quote {note or value}")


def blank(qid: str = "q1") -> Answer:
    return Answer(question_id=qid)


# Five members: value 10 wins 3-2 against 20. Among the 10s the ref sets are
# {a} (m0), {a,b} (m2, m4); among all members {c} (m1, m3) ties {a,b} 2-2.
MIXED = [
    ans("10", ["a"], "m0"),
    ans("20", ["c"], "m1"),
    ans("10", ["a", "b"], "m2"),
    ans("20", ["c"], "m3"),
    ans("10", ["b", "a"], "m4"),
]

CASES = [
    # (members, expected value, expected refs, expected explanation)
    (MIXED, "10", ["a", "b"], "m0"),  # the refs most of the winning value's members give
    ([ans("5", ["a"], "m0"), ans("5", ["b"], "m1"), ans("5", ["b"], "m2"), ans("6", ["a"], "m3")], "5", ["b"], "m0"),
]


@pytest.mark.parametrize(("members", "value", "refs", "note"), CASES)
def test_the_answer_wins_first_then_its_refs(members: list[Answer], value: str, refs: list[str], note: str) -> None:
    out = vote_question(members)
    assert (out.answer_value, out.ref_id, out.explanation) == (value, refs, note)
    assert out.supporting_materials == f"quote {note}"
    assert out.question_id == "q1"


def test_blank_answers_vote_only_when_no_member_answered() -> None:
    out = vote_question([blank(), ans("7", ["a"]), blank()])
    assert (out.answer_value, out.ref_id) == ("7", ["a"])
    out = vote_question([blank(), blank()])
    assert out == Answer(question_id="q1")
    assert out.ref_id == [] and out.explanation == "is_blank" and out.answer == "is_blank"


def test_grounded_answers_outvote_ungrounded_ones() -> None:
    ungrounded = Answer("q1", "5", "5", "W", ["a"], grounded=False)
    assert vote_question([ungrounded, ungrounded, ans("7", ["b"])]).answer_value == "7"
    assert vote_question([ungrounded, Answer("q1", "6", "6", "W", ["b"], grounded=False)]).answer_value == "5"


@pytest.mark.parametrize(
    ("values", "value", "note"),
    [
        # 1000 and 1000.5 are within 0.1 %: they outvote 1002 (representative: earliest member)
        (["1002", "1000", "1000.5"], "1000", "m1"),
        (["1000.5", "1002", "1000"], "1000.5", "m0"),
        # 1000 and 1002 are 0.2 % apart: 1002 wins 2-1
        (["1000", "1002", "1002"], "1002", "m1"),
        (["[10,20]", "[10.001,20]", "[10,21]"], "[10,20]", "m0"),
        (["GPT-3", "gpt-3 ", "GPT-4"], "GPT-3", "m0"),
    ],
)
def test_numeric_grouping(values: list[str], value: str, note: str) -> None:
    members = [ans(v, ["a"], f"m{i}") for i, v in enumerate(values)]
    out = vote_question(members)
    assert (out.answer_value, out.explanation) == (value, note)


@pytest.mark.parametrize(
    ("values", "value"),
    [
        (["123.45", "7"], "123.45"),  # a tie goes to the lowest member index
        (["7", "123.45", "123.45", "7"], "7"),
        (["5", "6", "6", "is_blank"], "6"),  # no tie: the majority wins over the first member
    ],
)
def test_ties_go_to_the_first_member(values: list[str], value: str) -> None:
    assert vote_question([ans(v, ["a"]) for v in values]).answer_value == value
    assert vote_question([ans("5", ["a", "b"]), ans("5", ["c"])]).ref_id == ["a", "b"]


def test_vote_all_missing_questions_count_as_blank() -> None:
    m0 = {"q1": ans("1", ["a"], qid="q1"), "q2": ans("2", ["b"], qid="q2")}
    m1 = {"q1": ans("1", ["a"], qid="q1")}
    m2 = {"q2": ans("3", ["c"], qid="q2")}
    out = vote_all([m0, m1, m2], ["q1", "q2", "q3"])
    assert [a.question_id for a in out] == ["q1", "q2", "q3"]
    # q1: 1, 1, blank -> 1; q2: 2, blank, 3 tie 1-1 once the blank is dropped -> the first, m0's 2; q3: all blank
    assert [a.answer_value for a in out] == ["1", "2", "is_blank"]
    out = vote_all([m0, m1, m2, {}], ["q2"])
    assert (out[0].answer_value, out[0].ref_id) == ("2", ["b"])


def test_vote_needs_members() -> None:
    with pytest.raises(ValueError, match="at least one"):
        vote_all([], ["q1"])
    with pytest.raises(ValueError, match="at least one"):
        vote_question([])


# --- early stop: a member is not asked once the vote is decided -------------------------------------

# 10.009 equals 10 and 10.018 (within 0.1 %), but 10 and 10.018 differ: grouping is not transitive
EARLY_VALUES = ["10", "10.009", "10.018", "4.3", "is_blank"]
EARLY_OPTIONS = [Answer("q1", v, v, "W", refs, v, v, grounded)
                 for v in EARLY_VALUES for refs in (["a"], ["a", "b"]) for grounded in (True, False)]


def test_a_decided_vote_is_the_vote_whatever_the_rest_answer() -> None:
    import itertools

    decided = 0
    for full in itertools.product(EARLY_OPTIONS, repeat=3):  # every 3-member ballot
        full = list(full)
        for k in (1, 2):
            if vote_decided(full[:k], 3):
                decided += 1
                assert vote_question(full[:k]) == vote_question(full), (k, full)
    assert decided >= 16 * len(EARLY_OPTIONS)  # it does stop: 16 deciding pairs, each with every 3rd answer


def test_vote_is_not_decided_by_a_minority() -> None:
    a, b = ans("10", ["a"]), ans("20", ["a"])
    assert vote_decided([a, a], 3) and not vote_decided([a, a], 4)  # 2 of 4 is no majority
    assert not vote_decided([a, b], 3)
    assert not vote_decided([a, ans("10", ["b"])], 3)  # same value, other refs: the 3rd could tip them
    ungrounded = Answer("q1", "10", "10", "W", ["a"], grounded=False)
    assert not vote_decided([ungrounded, ungrounded], 3)  # one grounded later answer would drop both
    assert not vote_decided([blank(), blank()], 3)


def test_members_not_asked_do_not_vote() -> None:
    members = [{"q1": ans("10", ["a"])}, {"q1": ans("20", ["b"])}, {"q1": None}]
    assert vote_all(members, ["q1"])[0].answer_value == "10"  # 1-1 tie: first member
    assert vote_all([{"q1": None}], ["q1"])[0].is_blank
