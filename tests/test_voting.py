"""Ensemble voting: strategies, blank handling, numeric grouping, ties, extra submissions."""
from __future__ import annotations

from pathlib import Path

import pytest

from stages.core.answer.record import Answer
from stages.core.answer.voting import (
    VoteParams,
    read_submission_answers,
    vote_all,
    vote_decided,
    vote_question,
)
from stages.core.common.dataio import InputError
from stages.core.common.params import ParamError, load_params, section


def ans(value: str, refs: list[str], note: str = "", qid: str = "q1") -> Answer:
    """An answer whose explanation tells which member it came from."""
    return Answer(question_id=qid, answer=value, answer_value=value, answer_unit="W", ref_id=refs,
                  explanation=note or value, supporting_materials=f"quote {note or value}")


def blank(qid: str = "q1") -> Answer:
    return Answer(question_id=qid)


def params(strategy: str = "answer_priority", ignore_blank: bool = True, tie_break: str = "first") -> VoteParams:
    return VoteParams(strategy=strategy, ignore_blank=ignore_blank, tie_break=tie_break)  # type: ignore[arg-type]


# Five members: value 10 wins 3-2 against 20. Among the 10s the ref sets are
# {a} (m0), {a,b} (m2, m4); among all members {c} (m1, m3) ties {a,b} 2-2.
MIXED = [
    ans("10", ["a"], "m0"),
    ans("20", ["c"], "m1"),
    ans("10", ["a", "b"], "m2"),
    ans("20", ["c"], "m3"),
    ans("10", ["b", "a"], "m4"),
]

STRATEGY_CASES = [
    # (strategy, members, expected value, expected refs, expected explanation)
    ("answer_priority", MIXED, "10", ["a", "b"], "m0"),
    ("union", MIXED, "10", ["a", "b"], "m0"),
    ("intersection", MIXED, "10", ["a"], "m0"),
    # independent: refs voted over all members; {c} (m1) and {a,b} (m2) tie 2-2, m1 first
    ("independent", MIXED, "10", ["c"], "m0"),
    # ref_priority: {c} ties {a,b} 2-2, m1 first -> answers among m1, m3 -> 20
    ("ref_priority", MIXED, "20", ["c"], "m1"),
    # intersection of {a} and {b} is empty: fall back to the group's majority set {b}
    ("intersection", [ans("5", ["a"], "m0"), ans("5", ["b"], "m1"), ans("5", ["b"], "m2")], "5", ["b"], "m0"),
    ("union", [ans("5", ["a"], "m0"), ans("5", ["b", "a"], "m1"), ans("6", ["z"], "m2")], "5", ["a", "b"], "m0"),
    (
        "answer_priority",
        [ans("5", ["a"], "m0"), ans("5", ["b"], "m1"), ans("5", ["b"], "m2"), ans("6", ["a"], "m3")],
        "5", ["b"], "m0",
    ),
    (
        "independent",
        [ans("5", ["a"], "m0"), ans("5", ["b"], "m1"), ans("6", ["a"], "m2"), ans("6", ["a"], "m3"), ans("5", ["c"], "m4")],
        "5", ["a"], "m0",
    ),
    (
        "ref_priority",
        [ans("5", ["a"], "m0"), ans("6", ["b"], "m1"), ans("7", ["b"], "m2"), ans("7", ["b"], "m3"), ans("5", ["c"], "m4")],
        "7", ["b"], "m2",
    ),
]


@pytest.mark.parametrize(("strategy", "members", "value", "refs", "note"), STRATEGY_CASES)
def test_strategies(strategy: str, members: list[Answer], value: str, refs: list[str], note: str) -> None:
    out = vote_question(members, params(strategy))
    assert (out.answer_value, out.ref_id, out.explanation) == (value, refs, note)
    assert out.supporting_materials == f"quote {note}"
    assert out.question_id == "q1"


@pytest.mark.parametrize(
    ("ignore_blank", "value", "refs"),
    [(True, "7", ["a"]), (False, "is_blank", [])],
)
def test_ignore_blank(ignore_blank: bool, value: str, refs: list[str]) -> None:
    members = [blank(), ans("7", ["a"]), blank()]
    out = vote_question(members, params(ignore_blank=ignore_blank))
    assert (out.answer_value, out.ref_id) == (value, refs)


def test_blank_winner_is_fully_blank() -> None:
    out = vote_question([blank(), ans("7", ["a"]), blank()], params(ignore_blank=False))
    assert out == Answer(question_id="q1")


@pytest.mark.parametrize("strategy", ["answer_priority", "ref_priority", "independent", "union", "intersection"])
@pytest.mark.parametrize("ignore_blank", [True, False])
def test_all_blank(strategy: str, ignore_blank: bool) -> None:
    out = vote_question([blank(), blank()], params(strategy, ignore_blank))
    assert out == Answer(question_id="q1")
    assert out.ref_id == [] and out.explanation == "is_blank" and out.answer == "is_blank"


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
    out = vote_question(members, params())
    assert (out.answer_value, out.explanation) == (value, note)


@pytest.mark.parametrize(
    ("tie_break", "values", "value"),
    [
        ("first", ["123.45", "7"], "123.45"),
        ("shortest", ["123.45", "7"], "7"),
        ("first", ["7", "123.45", "123.45", "7"], "7"),
        ("shortest", ["123.45", "7", "7", "123.45"], "7"),
        ("shortest", ["12", "34"], "12"),  # same length: lowest member index
        ("first", ["5", "6", "6", "is_blank"], "6"),  # no tie: the majority wins over "first"
    ],
)
def test_tie_break(tie_break: str, values: list[str], value: str) -> None:
    members = [ans(v, ["a"]) for v in values]
    assert vote_question(members, params(tie_break=tie_break)).answer_value == value


@pytest.mark.parametrize(("tie_break", "refs"), [("first", ["a", "b"]), ("shortest", ["c"])])
def test_tie_break_on_refs(tie_break: str, refs: list[str]) -> None:
    members = [ans("5", ["a", "b"]), ans("5", ["c"])]
    assert vote_question(members, params(tie_break=tie_break)).ref_id == refs


def test_vote_all_missing_questions_count_as_blank() -> None:
    m0 = {"q1": ans("1", ["a"], qid="q1"), "q2": ans("2", ["b"], qid="q2")}
    m1 = {"q1": ans("1", ["a"], qid="q1")}
    m2 = {"q2": ans("3", ["c"], qid="q2")}
    p = params(ignore_blank=False)
    out = vote_all([m0, m1, m2], ["q1", "q2", "q3"], p)
    assert [a.question_id for a in out] == ["q1", "q2", "q3"]
    # q1: 1, 1, blank -> 1; q2: 2, blank, 3 tie 1-1-1 -> the first, m0's 2; q3: all blank
    assert [a.answer_value for a in out] == ["1", "2", "is_blank"]
    # q2 with one more blank member: the blanks win when they are not ignored
    out = vote_all([m0, m1, m2, {}], ["q2"], p)
    assert out[0] == Answer(question_id="q2")
    out = vote_all([m0, m1, m2, {}], ["q2"], params(ignore_blank=True))
    assert (out[0].answer_value, out[0].ref_id) == ("2", ["b"])


def test_vote_needs_members() -> None:
    with pytest.raises(ValueError, match="at least one"):
        vote_all([], ["q1"], params())
    with pytest.raises(ValueError, match="at least one"):
        vote_question([], params())


HEADER = "id,question,answer,answer_value,answer_unit,ref_id,ref_url,supporting_materials,explanation\n"


def test_read_submission_answers_round_trip(tmp_path: Path) -> None:
    csv = tmp_path / "other.csv"
    csv.write_text(
        HEADER
        + "q1,Q?,64.7 GB,64.7,GB,['chen2024'],['u'],Table 3,Table\n"
        + "q2,Q?,\"1,287 W\",\"1,287\",W,\"['a','b']\",is_blank,is_blank,Quote\n"
        + "q3,Q?,Unable to answer,is_blank,MWh,is_blank,is_blank,is_blank,is_blank\n"
        + "q4,Q?,TRUE,TRUE,is_blank,luccioni2025b,,,\n"
    )
    got = read_submission_answers(str(csv))
    assert got == {
        "q1": Answer("q1", "64.7 GB", "64.7", "GB", ["chen2024"], "Table", "Table 3"),
        "q2": Answer("q2", "1,287 W", "1287", "W", ["a", "b"], "Quote", "is_blank"),
        "q3": Answer("q3", "Unable to answer", "is_blank", "MWh", [], "is_blank", "is_blank"),
        "q4": Answer("q4", "TRUE", "1", "is_blank", ["luccioni2025b"], "is_blank", "is_blank"),
    }
    # voted together with a member: the submission's 1287 groups with the member's 1287.4
    member = {"q2": Answer("q2", "1287.4", "1287.4", "W", ["a"])}
    out = vote_all([member, got, {"q2": ans("9", ["z"], qid="q2")}], ["q2"], params())
    assert (out[0].answer_value, out[0].ref_id) == ("1287.4", ["a"])


def test_read_submission_minimal_columns(tmp_path: Path) -> None:
    csv = tmp_path / "min.csv"
    csv.write_text("id,answer_value,ref_id\nq1,5,['a']\n")
    assert read_submission_answers(csv) == {"q1": Answer("q1", answer_value="5", ref_id=["a"])}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("id,answer_value\nq1,5\n", "missing required column(s) ref_id"),
        ("id,answer_value,ref_id\n,5,['a']\n", "row 2: column id is empty"),
        ("id,answer_value,ref_id\nq1,5,['a']\nq1,6,['b']\n", "row 3: column id repeats 'q1'"),
    ],
)
def test_read_submission_errors(tmp_path: Path, text: str, message: str) -> None:
    csv = tmp_path / "bad.csv"
    csv.write_text(text)
    with pytest.raises(InputError) as e:
        read_submission_answers(csv)
    assert str(csv) in str(e.value) and message in str(e.value)


def test_read_submission_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        read_submission_answers(tmp_path / "nope.csv")


def test_params_section() -> None:
    raw = {"vote": {"strategy": "union", "ignore_blank": False, "tie_break": "shortest",
                    "extra_submissions": ["submissions/other.csv"]}}
    assert section(VoteParams, "vote", raw) == VoteParams("union", False, "shortest", ["submissions/other.csv"])
    with pytest.raises(ParamError, match="vote.strategy"):
        section(VoteParams, "vote", {"vote": {"strategy": "majority"}})
    with pytest.raises(ParamError, match="vote.tie_break"):
        section(VoteParams, "vote", {"vote": {"tie_break": "last"}})


def test_params_yaml_vote_section() -> None:
    p = section(VoteParams, "vote", load_params(Path(__file__).parents[1] / "params.yaml"))
    assert isinstance(p, VoteParams)


# --- early stop (ensemble.early_stop) ------------------------------------------------------------

# 10.009 equals 10 and 10.018 (within 0.1 %), but 10 and 10.018 differ: grouping is not transitive
EARLY_VALUES = ["10", "10.009", "10.018", "4.3", "is_blank"]
EARLY_OPTIONS = [Answer("q1", v, v, "W", refs, v, v, grounded)
                 for v in EARLY_VALUES for refs in (["a"], ["a", "b"]) for grounded in (True, False)]


@pytest.mark.parametrize("strategy", ["answer_priority", "ref_priority", "independent"])
@pytest.mark.parametrize("ignore_blank", [True, False])
@pytest.mark.parametrize("prefer_grounded", [True, False])
def test_a_decided_vote_is_the_vote_whatever_the_rest_answer(strategy, ignore_blank, prefer_grounded) -> None:
    import itertools

    vp = VoteParams(strategy=strategy, ignore_blank=ignore_blank, prefer_grounded=prefer_grounded)  # type: ignore[arg-type]
    decided = 0
    for full in itertools.product(EARLY_OPTIONS, repeat=3):  # every 3-member ballot
        full = list(full)
        for k in (1, 2):
            if vote_decided(full[:k], 3, vp):
                decided += 1
                assert vote_question(full[:k], vp) == vote_question(full, vp), (k, full)
    assert decided >= 16 * len(EARLY_OPTIONS)  # it does stop: 16 deciding pairs, each with every 3rd answer


def test_vote_is_not_decided_by_a_minority_or_for_merging_strategies() -> None:
    a, b = ans("10", ["a"]), ans("20", ["a"])
    assert vote_decided([a, a], 3, params()) and not vote_decided([a, a], 4, params())  # 2 of 4 is no majority
    assert not vote_decided([a, b], 3, params())
    assert not vote_decided([a, ans("10", ["b"])], 3, params())  # same value, other refs: the 3rd could tip them
    for strategy in ("union", "intersection"):  # a skipped member could add or remove a ref
        assert not vote_decided([a, a], 3, params(strategy))
    assert not vote_decided([a, a], 3, VoteParams(extra_submissions=["other.csv"]))  # voters it cannot count
    ungrounded = Answer("q1", "10", "10", "W", ["a"], grounded=False)
    assert not vote_decided([ungrounded, ungrounded], 3, params())  # one grounded later answer would drop both
    assert not vote_decided([blank(), blank()], 3, params())


def test_members_not_asked_do_not_vote() -> None:
    members = [{"q1": ans("10", ["a"])}, {"q1": ans("20", ["b"])}, {"q1": None}]
    assert vote_all(members, ["q1"], params(ignore_blank=False))[0].answer_value == "10"  # 1-1 tie: first member
    assert vote_all([{"q1": None}], ["q1"], params())[0].is_blank
