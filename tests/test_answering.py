"""Prompt shape, defensive parsing and retry-on-abstention of the answerer."""
from __future__ import annotations

from dataclasses import dataclass, field

from stages.core.answer.free_reader import (
    answer_question,
    build_messages,
    response_format,
)
from stages.core.answer.params import AnswerParams
from stages.core.answer.record import ContextBlock
from stages.core.llm.protocol import Completion
from stages.core.llm.replies import parse_json_reply

BLOCKS = [ContextBlock("patterson2021", "Training GShard-600B used 24 MWh and produced 4.3 net tCO2e."),
          ContextBlock("chen2024", "| Model | Size |\n| LLaMA-33B | 64.7 GB |", media="table")]


@dataclass
class ScriptedLLM:
    """Replies from a script, recording what it was asked (a unit-test stand-in)."""

    replies: list[str]
    calls: list[dict] = field(default_factory=list)

    def complete(self, messages, *, temperature, seed, max_tokens, response_format=None):
        self.calls.append({"messages": messages, "seed": seed, "response_format": response_format})
        text = self.replies[min(len(self.calls), len(self.replies)) - 1]
        return Completion(text=text, prompt_tokens=10, completion_tokens=5,
                          finish_reason="length" if text.endswith("TRUNC") else "stop")


def test_context_comes_before_the_question_and_media_is_separate():
    msgs = build_messages("What were the net CO2e emissions?", "tCO2e", BLOCKS)
    body = msgs[-1]["content"]
    assert body.index("[ref_id=patterson2021]") < body.index("Referenced media:") < body.index("Question:")
    assert "[ref_id=chen2024] (table)" in body


def test_schema_restricts_ref_ids_to_context_docs():
    fmt = response_format(["patterson2021", "chen2024", "patterson2021"])
    items = fmt["json_schema"]["schema"]["properties"]["ref_id"]["items"]
    assert items["enum"] == ["chen2024", "patterson2021"]


def test_parse_reply_is_defensive():
    assert parse_json_reply('```json\n{"answer_value": "4.3"}\n```') == {"answer_value": "4.3"}
    assert parse_json_reply('Sure! {"answer_value": "4.3", "ref_id": []} hope this helps') == {"answer_value": "4.3", "ref_id": []}
    assert parse_json_reply("") is None
    assert parse_json_reply('{"answer_value": "4.') is None
    assert parse_json_reply("[1, 2]") is None


def test_answer_is_normalised_and_foreign_refs_dropped():
    llm = ScriptedLLM(['{"explanation": "produced 4.3 net tCO2e", "answer": "4.3 tCO2e", '
                       '"answer_value": "4.3 tCO2e", "ref_id": ["patterson2021", "made_up_2020"]}'])
    out = answer_question(llm, "q009", "Net CO2e of GShard?", "tCO2e", [BLOCKS], AnswerParams(), 7, {"patterson2021"})
    assert out.answer.answer_value == "4.3"
    assert out.answer.ref_id == ["patterson2021"]
    assert out.attempts == 1 and llm.calls[0]["seed"] == 7
    assert "4.3" in out.answer.supporting_materials


def test_abstention_malformed_and_truncated_replies_are_retried_with_wider_context():
    wide = BLOCKS + [ContextBlock("dodge2022", "The answer is 42 kWh.")]
    llm = ScriptedLLM(['{"answer": "is_blank", "answer_value": "is_blank", "ref_id": [], "explanation": "is_blank"}',
                       '{"answer_value": "42", "ref_id": ["dodge2022"] TRUNC',
                       '{"explanation": "42 kWh", "answer": "42 kWh", "answer_value": "42", "ref_id": ["dodge2022"]}'])
    out = answer_question(llm, "q1", "How much?", "kWh", [BLOCKS, wide, wide], AnswerParams(max_retries=2), 0, set())
    assert out.attempts == 3
    assert out.answer.answer_value == "42" and out.answer.ref_id == ["dodge2022"]
    assert "dodge2022" not in llm.calls[0]["messages"][-1]["content"]
    assert "dodge2022" in llm.calls[1]["messages"][-1]["content"]


def test_all_attempts_blank_gives_blank_answer_without_crashing():
    llm = ScriptedLLM(["", "not json at all"])
    out = answer_question(llm, "q1", "How much?", "kWh", [BLOCKS, BLOCKS], AnswerParams(max_retries=1), 0, set())
    assert out.answer.is_blank and out.attempts == 2 and out.answer.ref_id == []


def test_number_misplaced_in_answer_field_is_recovered_for_unit_questions():
    llm = ScriptedLLM(['{"explanation": "400 W", "answer": "400 W", "answer_value": "high", "ref_id": ["gpu2024"]}'])
    out = answer_question(llm, "q2", "Peak power?", "W", [BLOCKS], AnswerParams(), 0, {"gpu2024"})
    assert out.answer.answer_value == "400"
    llm = ScriptedLLM(['{"explanation": "x", "answer": "Germany", "answer_value": "Germany", "ref_id": []}'])
    out = answer_question(llm, "q3", "Which country?", "is_blank", [BLOCKS], AnswerParams(), 0, set())
    assert out.answer.answer_value == "Germany"


def test_true_false_sentences_become_1_or_0():
    """The 1.5B model's train_QA run answered train q102 with a sentence ("It is false that ...")."""
    from stages.core.answer.free_reader import true_false_value

    assert true_false_value("It is false that the AI Act requires this.", "") == "0"
    assert true_false_value("True", "") == "1"
    assert true_false_value("1", "False") == "1"  # a clean 1/0 is kept
    assert true_false_value("The claim is not true.", "") == "0"
    assert true_false_value("partly true and partly false", "") == "partly true and partly false"
    llm = ScriptedLLM(['{"explanation": "x", "answer": "It is false.", "answer_value": "It is false that it holds.", '
                       '"ref_id": ["chen2024"]}'])
    out = answer_question(llm, "q102", "True or False: the act requires X.", "is_blank", [BLOCKS], AnswerParams(), 0,
                          {"chen2024"})
    assert out.answer.answer_value == "0"


def test_text_questions_take_the_name_when_answer_value_is_a_stray_number():
    from stages.core.answer.free_reader import text_value

    assert text_value("0", "ML.ENERGY Benchmark") == "ML.ENERGY Benchmark"
    assert text_value("5842", "Financial Sentiment Analysis [18]") == "Financial Sentiment Analysis"
    assert text_value("8", "8 GPUs") == "8"  # the number is the answer
    assert text_value("5842", "5,842 entries") == "5842"
    assert text_value("GPT-3", "GPT-3") == "GPT-3"
    reply = '{"explanation": "x", "answer": "ML.ENERGY Benchmark", "answer_value": "0", "ref_id": ["chen2024"]}'
    out = answer_question(ScriptedLLM([reply]), "q003", "What is the name of the benchmark suite?", "is_blank",
                          [BLOCKS], AnswerParams(), 0, set())
    assert out.answer.answer_value == "ML.ENERGY Benchmark"
    # questions with a unit keep numbers, True/False keep 1/0
    out = answer_question(ScriptedLLM([reply]), "q4", "How many?", "GB", [BLOCKS], AnswerParams(), 0, set())
    assert out.answer.answer_value == "0"
    out = answer_question(ScriptedLLM([reply]), "q5", "True or False: x", "is_blank", [BLOCKS], AnswerParams(), 0, set())
    assert out.answer.answer_value == "0"
