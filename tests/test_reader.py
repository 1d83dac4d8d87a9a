"""The typed reader: type detection, schemas, grounded readings, calibration, demos, member order."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from stages.core.answer import typed_prompt as prompt
from stages.core.answer import typed_reader as reader
from stages.core.answer.demos import demo_messages
from stages.core.answer.ensemble import member_view
from stages.core.answer.kinds import asks_to_compute, question_kind
from stages.core.answer.params import AnswerParams, EnsembleParams
from stages.core.answer.record import Answer, ContextBlock
from stages.core.answer.typed_answer import (
    TypedMember,
    TypedQuestion,
    TypedSetup,
    answer_question_typed,
)
from stages.core.answer.voting import vote_question
from stages.core.common.dataio import InputError
from stages.core.common.values import BLANK
from stages.core.llm.protocol import Completion

UNITS = [
    ContextBlock("strubell2019", "Table 1: Consumption CO2e (lbs) | Human life, avg, 1 year | 11,023"),
    ContextBlock("patterson2021", "Training GShard-600B used 24 MWh and produced 4.3 net tCO2e."),
    ContextBlock("samsi2024", "Power draw fluctuated between 15% and 85% of the maximum."),
]


@pytest.mark.parametrize("question,unit,kind", [
    ("True or False: TPUs use less power than GPUs.", "is_blank", "true_false"),
    ("  true or false: x", "percent", "true_false"),
    ("Which library shards the model?", "is_blank", "text"),
    ("Which library shards the model?", "", "text"),
    ("What range of PUE did the provider report?", "PUE", "range"),
    ("Between roughly what percentages of max power did usage fluctuate?", "percent", "range"),
    ("By how many tCO2e did emissions drop between 2019 and 2023?", "tCO2e", "numeric"),
    ("How many kWh did training use?", "kWh", "numeric"),
])
def test_question_kind(question, unit, kind):
    assert question_kind(question, unit) == kind


def test_numeric_schema_points_before_a_json_number_and_has_no_null():
    s = prompt.reply_schema("numeric", 3)
    assert list(s["properties"]) == ["units", "value"] and s["required"] == ["units", "value"]
    assert s["properties"]["units"]["items"]["enum"] == [1, 2, 3]
    assert s["properties"]["units"]["maxItems"] == reader.MAX_POINTERS
    assert s["properties"]["value"] == {"type": "number"}  # the model always answers


def test_other_schemas():
    assert list(prompt.reply_schema("range", 2)["properties"]) == ["units", "low", "high"]
    assert prompt.reply_schema("true_false", 2)["properties"]["answer"] == {"type": "boolean"}
    text = prompt.reply_schema("text", 2)["properties"]["answer"]
    assert text == {"type": "string", "maxLength": reader.MAX_TEXT_CHARS}
    fmt = prompt.response_format("range", 4)
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"]["properties"]["units"]["items"]["enum"][-1] == 4


def test_units_are_numbered_and_the_question_comes_last():
    msg = prompt.user_message("How many lbs?", "lbs", "numeric", UNITS[:2] + [ContextBlock("x", "row", "table")])
    assert msg.index("[1] strubell2019: Table 1") < msg.index("[2] patterson2021:") < msg.index("[3] x (table): row")
    assert msg.index("[3] x") < msg.index("Question: How many lbs?") < msg.index("Answer unit: lbs")
    assert "Answer unit" not in prompt.user_message("True or False: x", BLANK, "true_false", UNITS)


def test_numeric_reading_grounded_with_thousands_separator():
    r = reader.read_reply("numeric", "lbs", {"units": [1], "value": 11023}, UNITS)
    assert (r.value, r.pointers, r.grounded) == ("11023", (1,), True)
    assert reader.refs_for(r, UNITS) == ["strubell2019"]
    assert "11,023" in reader.quote_for(r, UNITS)


def test_a_json_number_copied_without_its_magnitude_word_gets_it_back():
    units = [ContextBlock("a", "FLM-101B was trained on 0.31 trillion tokens; the cluster held 32 billion parameters.")]
    assert reader.read_reply("numeric", "parameters", {"units": [1], "value": 32}, units).value == "32000000000"
    assert reader.read_reply("numeric", "tokens", {"units": [1], "value": 0.31}, units).value == "310000000000"
    # the unit carries the magnitude itself, or the number is not written with a magnitude word
    assert reader.read_reply("numeric", "billion parameters", {"units": [1], "value": 32}, units).value == "32"
    assert reader.read_reply("numeric", "tokens", {"units": [1], "value": 101}, units).value == "101"


def test_numeric_reading_grounded_through_a_unit_conversion():
    # 11,023 lbs stated; the question asks for kg: 11023 * 0.453592 = 5000.0
    r = reader.read_reply("numeric", "kg", {"units": [1], "value": 5000.0}, UNITS)
    assert r.grounded and r.value == "5000"
    # MWh stated, kWh asked
    assert reader.read_reply("numeric", "kWh", {"units": [2], "value": 24000}, UNITS).grounded


def test_value_in_another_unit_is_grounded_there_and_a_value_in_none_is_not():
    r = reader.read_reply("numeric", "MWh", {"units": [1], "value": 24}, UNITS)
    assert (r.value, r.pointers, r.grounded) == ("24", (2,), True)  # 24 is in unit 2, not the pointed unit 1
    assert reader.refs_for(r, UNITS) == ["patterson2021"]
    r = reader.read_reply("numeric", "MWh", {"units": [], "value": 24}, UNITS)
    assert r.grounded  # no pointers: the whole context is the evidence
    r = reader.read_reply("numeric", "MWh", {"units": [2], "value": 31.7}, UNITS)
    assert (r.grounded, r.pointers) == (False, (2,))
    t = reader.read_reply("text", BLANK, {"units": [1], "answer": "gshard-600b"}, UNITS)
    assert (t.grounded, t.pointers) == (True, (2,))


def test_range_text_and_pointer_hygiene():
    r = reader.read_reply("range", "percent", {"units": [3, 9, 3, True], "low": 85, "high": 15}, UNITS)
    assert (r.value, r.pointers, r.grounded) == ("[15,85]", (3,), True)
    assert reader.read_reply("range", "percent", {"units": [3], "low": 15, "high": None}, UNITS).is_blank
    t = reader.read_reply("text", BLANK, {"units": [2], "answer": "GShard-600B."}, UNITS)
    assert (t.value, t.grounded) == ("GShard-600B", True)
    assert not reader.read_reply("text", BLANK, {"units": [2], "answer": "FairScale"}, UNITS).grounded
    assert reader.read_reply("text", BLANK, {"units": [], "answer": None}, UNITS).is_blank
    assert reader.read_reply("numeric", "W", None, UNITS).is_blank
    assert reader.read_reply("numeric", "W", {"units": [1], "value": True}, UNITS).is_blank


def test_true_false_reading_sampled_or_from_probability():
    assert reader.read_reply("true_false", BLANK, {"units": [1], "answer": True}, UNITS).value == "1"
    assert reader.read_reply("true_false", BLANK, {"units": [1], "answer": True}, UNITS, true_prob=0.3).value == "0"
    assert reader.read_reply("true_false", BLANK, {"units": [], "answer": False}, UNITS, true_prob=0.7).value == "1"


def test_answer_token_probs_reads_the_last_boolean_position():
    lp = [['{"', [['{"', -0.1]]], ["units", [["units", -0.1]]], [" true", [[" \"", -0.5], [" true", -1.0],
                                                                          ["true", -2.0], [" false", -0.7]]],
          [" }", [[" }", -0.1]]]]
    t, f = reader.answer_token_probs(lp)
    assert t == pytest.approx(0.36788 + 0.13534, rel=1e-4) and f == pytest.approx(0.49659, rel=1e-4)
    assert reader.answer_token_probs([["{", [["{", 0.0]]]]) is None
    assert reader.answer_token_probs(None) is None


def test_contextual_calibration_arithmetic():
    # P(true)=0.6, P(false)=0.4 on the question; the content-free prior is (0.8, 0.2):
    # 0.6/0.8 = 0.75 vs 0.4/0.2 = 2.0 -> P(True) = 0.75 / 2.75
    assert reader.calibrated_true_prob((0.6, 0.4), (0.8, 0.2)) == pytest.approx(0.272727, rel=1e-5)
    assert reader.calibrated_true_prob((0.6, 0.4), None) == pytest.approx(0.6)
    assert reader.calibrated_true_prob((0.0, 0.0), (0.5, 0.5)) == 0.5


DEV_CSV = """id,question,answer,answer_value,answer_unit,ref_id,ref_url,supporting_materials,explanation
d1,How many kg of CO2e for one human life-year?,5000 kg,5000,kg,['strubell2019'],[],"Human life, avg, 1 year 11,023",Math: 11023 * 0.453592 = 5000
d2,True or False: TPUs are slower.,FALSE,0,is_blank,['patterson2021'],[],TPU v2 runs 4.3X faster than P100 GPUs.,Quote
d3,Which library shards the model?,FairScale,FairScale,is_blank,['samsi2024'],[],We use FairScale to shard the model.,Quote
d4,What range of PUE was reported?,"1.1-1.2","[1.1,1.2]",PUE,['x2024'],[],A PUE of 1.1 to 1.2.,Quote
"""


def test_demos_are_shown_like_real_questions(tmp_path: Path):
    csv = tmp_path / "dev.csv"
    csv.write_text(DEV_CSV, encoding="utf-8")
    turns = demo_messages(csv, ["d1", "d2", "d3", "d4"])
    assert [t["role"] for t in turns] == ["user", "assistant"] * 4
    replies = [json.loads(t["content"]) for t in turns[1::2]]
    assert replies[0] == {"units": [1], "value": 5000}  # a JSON number, as the schema wants
    assert replies[1] == {"units": [2], "answer": False}  # the gold unit alternates position
    assert replies[2] == {"units": [1], "answer": "FairScale"}
    assert replies[3] == {"units": [2], "low": 1.1, "high": 1.2}
    assert "[1] samsi2024: We use FairScale" in turns[2]["content"]  # the next demo's quote is the distractor
    assert "[1] strubell2019: Human life" in turns[6]["content"]  # ... wrapping round
    with pytest.raises(InputError, match=r"dev\.csv.*d9"):
        demo_messages(csv, ["d1", "d9"])
    assert demo_messages(csv, []) == []


@dataclass
class ScriptedTypedLLM:
    """Replies by (member seed, attempt level) and records the order of calls."""

    replies: dict[tuple[int, int], str]
    calls: list[tuple[int, int]] = field(default_factory=list)

    def complete(self, messages, *, temperature, seed, max_tokens, response_format=None, top_logprobs=0):
        n_units = len(response_format["json_schema"]["schema"]["properties"]["units"]["items"]["enum"])
        level = 0 if n_units == 1 else 1
        self.calls.append((seed, level))
        return Completion(text=self.replies[(seed, level)], prompt_tokens=100, completion_tokens=10,
                          finish_reason="stop")


LEVELS = [[ContextBlock("patterson2021", "Training GShard-600B used 24 MWh and produced 4.3 net tCO2e.")],
          [ContextBlock("patterson2021", "Training GShard-600B used 24 MWh and produced 4.3 net tCO2e."),
           ContextBlock("strubell2019", "BERT training used 1,507 kWh.")]]


def test_members_answer_attempt_major_and_blank_readings_are_retried():
    other = [[ContextBlock("strubell2019", "BERT training used 1,507 kWh.")], LEVELS[1]]
    own = [[ContextBlock("samsi2024", "Power draw fluctuated between 15% and 85% of the maximum.")], LEVELS[1]]
    llm = ScriptedTypedLLM({(0, 0): '{"units": [1], "value": 24}',  # grounded at once
                            (1, 0): '{"units": [1], "value": "n/a"}',  # no number: blank -> retried
                            (1, 1): '{"units": [2], "value": 1507}',
                            (2, 0): '{"units": [1], "value": 77}'})  # ungrounded: kept, not retried
    members = [TypedMember(LEVELS, 0), TypedMember(other, 1), TypedMember(own, 2)]
    setup = TypedSetup([{"role": "system", "content": "s"}], bare=[{"role": "system", "content": "s"}])
    energy = TypedQuestion("q1", "Energy?", "MWh")
    outs = answer_question_typed(llm, energy, members, AnswerParams(max_retries=1), setup)
    assert llm.calls == [(0, 0), (1, 0), (2, 0), (1, 1)]  # every level 0 before any retry
    # 1,507 kWh copied as 1507 for an answer in MWh is restated as 1.507 (restate.py)
    assert [o.answer.answer_value for o in outs] == ["24", "1.507", "77"]
    assert [o.answer.grounded for o in outs] == [True, True, False]
    assert outs[1].answer.ref_id == ["strubell2019"] and outs[1].attempts == 2
    once = answer_question_typed(llm, energy, members[1:2], AnswerParams(max_retries=0), setup)
    assert once[0].answer.is_blank and once[0].attempts == 1


def test_greedy_members_with_the_same_request_share_one_reply():
    llm = ScriptedTypedLLM({(0, 0): '{"units": [1], "value": 24}', (1, 0): '{"units": [1], "value": 99}',
                            (2, 0): '{"units": [1], "value": 77}'})
    setup = TypedSetup([{"role": "system", "content": "s"}, {"role": "user", "content": "demo"}],
                       bare=[{"role": "system", "content": "s"}])
    params = AnswerParams(max_retries=0)
    members = [TypedMember(LEVELS, 0), TypedMember(LEVELS, 1), TypedMember(LEVELS, 2, extra_demo_kinds=("numeric",))]
    outs = answer_question_typed(llm, TypedQuestion("q1", "Energy?", "MWh"), members, params, setup)
    # member 1 asks what member 0 asked: no second call; member 2 is shown the demonstrations: its own call
    assert llm.calls == [(0, 0), (2, 0)]
    assert [o.answer.answer_value for o in outs] == ["24", "24", "77"]
    assert outs[1].attempts == 1 and outs[1].prompt_tokens == 0 and outs[0].prompt_tokens == 100


def test_member_views():
    a, b = ContextBlock("a", "1"), ContextBlock("b", "2")
    levels = [[a, b], [a, b, ContextBlock("c", "3")]]
    assert member_view(levels, "as_is") == levels
    assert member_view(levels, "reversed")[0] == [b, a]


def test_vote_prefers_grounded_answers():
    answers = [Answer("q", answer_value="5", grounded=False), Answer("q", answer_value="5", grounded=False),
               Answer("q", answer_value="7", grounded=True)]
    assert vote_question(answers).answer_value == "7"


@pytest.mark.parametrize("question,computes", [
    ("By how many megawatts did storage capacity grow from 2022 to 2023?", True),
    ("How many more tons of CO2e did Llama 3 emit than Gemma?", True),
    ("How much cheaper per hour is the Lamina configuration?", True),
    ("How many times larger is the acquisition cost than the amortized cost?", True),
    ("By what factor did the energy increase on two nodes?", True),
    ("What is the combined training plus finetuning energy of BLOOMz-7B?", True),
    ("Adding the pretraining and the alignment compute, how many GPU hours in total?", True),
    ("Converted to kilometers, what is that distance?", True),
    # a unit between "how many" and the comparison (dev d512, d816), a saving compared with another value (d504)
    ("How many US dollars more per hour does the A100 cost than the V100?", True),
    ("How many dollars cheaper is fine-tuning on the cheaper GPU than on the other?", True),
    ("How much energy does the pruned model save compared with the dense one?", True),
    ("How many kWh did training use?", False),
    ("How many wall-clock hours in total did it take to train FLM-101B?", False),  # a stated total
    ("What percentage of papers cited the 3 Wh figure?", False),
])
def test_asks_to_compute(question, computes):
    assert asks_to_compute(question) is computes


def test_numeric_questions_worded_to_compute_ask_for_an_operation():
    seen = []

    class Spy(ScriptedTypedLLM):
        def complete(self, messages, **kw):
            seen.append((messages[-1]["content"].splitlines()[-1], kw["response_format"]["json_schema"]["schema"]))
            return super().complete(messages, **kw)

    llm = Spy({(0, 0): '{"units": [1], "operation": "difference", "a": 24, "b": 4.3}'})
    setup = TypedSetup([{"role": "system", "content": "s"}], bare=[{"role": "system", "content": "s"}])
    member = [TypedMember(LEVELS, 0)]
    more = TypedQuestion("q1", "How many more MWh than tCO2e?", "MWh")
    out = answer_question_typed(llm, more, member, AnswerParams(), setup)
    assert list(seen[-1][1]["properties"]) == ["units", "operation", "a", "b"]
    assert '"operation"' in seen[-1][0] and "computed from them" in seen[-1][0]
    assert out[0].answer.answer_value == "19.7" and out[0].answer.grounded  # both operands stated
    llm.replies[(0, 0)] = '{"units": [1], "value": 24}'
    # not worded to compute
    answer_question_typed(llm, TypedQuestion("q1", "How many MWh?", "MWh"), member, AnswerParams(), setup)
    assert seen[-1][1]["properties"]["value"] == {"type": "number"}


def test_demo_kinds_choose_the_prefix_and_group_questions_that_share_it():
    import polars as pl

    from stages.core.answer.ensemble import MemberRun, answer_members
    from stages.core.answer.params import EnsembleParams

    @dataclass
    class Recorder:
        calls: list[tuple[str, int]] = field(default_factory=list)

        def complete(self, messages, *, temperature, seed, max_tokens, response_format=None, top_logprobs=0):
            question = messages[-1]["content"].split("Question: ")[-1].split("\n")[0]
            self.calls.append((question, len(messages)))
            text = {"answer_true_false": '{"units": [1], "answer": true}',
                    "answer_text": '{"units": [1], "answer": "GShard-600B"}',
                    "answer_numeric": '{"units": [1], "value": 24}'}[response_format["json_schema"]["name"]]
            return Completion(text=text, prompt_tokens=10, completion_tokens=5, finish_reason="stop")

    qs = pl.DataFrame({"id": ["n1", "t1", "n2", "x1"],
                       "question": ["Energy of GShard?", "True or False: GShard used 24 MWh.", "Energy again?",
                                    "Which model?"],
                       "answer_unit": ["MWh", "is_blank", "MWh", "is_blank"]})
    ctx = {q: LEVELS[:1] for q in qs["id"]}
    params = AnswerParams(max_retries=0, demos=["d303", "d317"])
    llm = Recorder()
    rows = answer_members(llm, qs, ctx, params, EnsembleParams(n=1),
                          MemberRun("m", {"patterson2021"}, max_concurrency=1))
    # the content-free True/False prior first; demos shown to True/False and names (system + 2 demo turns of
    # 2 messages + the question), not to numbers
    assert llm.calls == [("True or False: N/A", 6), ("True or False: GShard used 24 MWh.", 6), ("Which model?", 6),
                         ("Energy of GShard?", 2), ("Energy again?", 2)]
    assert [r["question_id"] for r in rows[0]] == ["n1", "t1", "n2", "x1"]  # rows back in question order
    assert [r["answer_value"] for r in rows[0]] == ["24", "1", "24", "GShard-600B"]


@dataclass
class NumberRecorder:
    """Answers every numeric call with unit 1 and 24; records (seed, temperature, messages) per call."""

    calls: list[tuple[int, float, list[dict[str, str]]]] = field(default_factory=list)

    def complete(self, messages, *, temperature, seed, max_tokens, response_format=None, top_logprobs=0):
        self.calls.append((seed, temperature, messages))
        return Completion(text='{"units": [1], "value": 24}', prompt_tokens=10, completion_tokens=5,
                          finish_reason="stop")


def test_members_can_be_shown_different_demonstrations():
    import polars as pl

    from stages.core.answer.ensemble import MemberRun, answer_members

    qs = pl.DataFrame({"id": ["n1"], "question": ["Energy of GShard?"], "answer_unit": ["MWh"]})
    params = AnswerParams(max_retries=0, demos=["d303", "d317"])
    llm = NumberRecorder()
    # after the True/False prior (shown the demos), member 1 is shown the worked examples for numeric
    # questions, member 0 is not; both answer 24, so member 2 is not asked (the vote is decided)
    rows = answer_members(llm, qs, {"n1": LEVELS[:1]}, params, EnsembleParams(n=3),
                          MemberRun("m", {"patterson2021"}, max_concurrency=1))
    assert [(seed, len(messages)) for seed, _, messages in llm.calls] == [(0, 6), (0, 2), (0, 6)]
    assert [r[0]["skipped"] for r in rows] == [False, False, True]


def test_greedy_members_send_one_seed_and_share_identical_requests():
    import polars as pl

    from stages.core.answer.ensemble import MemberRun, answer_members

    two = [[ContextBlock("patterson2021", "GShard used 24 MWh."), ContextBlock("strubell2019", "BERT used 24 MWh.")]]
    qs = pl.DataFrame({"id": ["n1"], "question": ["Energy of GShard?"], "answer_unit": ["MWh"]})
    llm = NumberRecorder()
    rows = answer_members(llm, qs, {"n1": two}, AnswerParams(max_retries=0, demos=[]),
                          EnsembleParams(n=4, seed=5),
                          MemberRun("m", {"patterson2021", "strubell2019"}, max_concurrency=1))
    # after the True/False prior: members 0, 1 and 3 read the context reversed and send the same request (one
    # call, seed 5 for all), member 2 reads it as retrieved; the 2-2 split on ref ids asks member 3
    first_units = [m[-1]["content"].split("[1]")[1].split("\n")[0].strip() for _, _, m in llm.calls[1:]]
    assert [(seed, t) for seed, t, _ in llm.calls] == [(0, 0.0), (5, 0.0), (5, 0.0)]
    assert first_units == ["strubell2019: BERT used 24 MWh.", "patterson2021: GShard used 24 MWh."]
    assert [r[0]["seed"] for r in rows] == [5, 6, 7, 8]  # the rows keep each member's own seed
    assert [r[0]["prompt_tokens"] for r in rows] == [10, 0, 10, 0]
    assert [r[0]["view"] for r in rows] == ["reversed", "reversed", "as_is", "reversed"]
