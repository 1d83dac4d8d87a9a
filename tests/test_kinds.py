"""Questions without answer units: the kind and unit inferred from the question (answer.infer_unit),
the explain kind's reply validation, and a questions CSV without an answer_unit column through the
answer stage's driver and the submission."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from stages.core.answer import typed_reader as reader
from stages.core.answer.ensemble import MemberRun, answer_members
from stages.core.answer.kinds import infer_type, infer_unit, question_type
from stages.core.answer.params import AnswerParams, EnsembleParams
from stages.core.answer.typed_answer import EXPLAIN_MAX_TOKENS, MAX_TOKENS
from stages.core.answer import typed_prompt as prompt
from stages.core.answer.record import Answer, ContextBlock
from stages.core.answer.submission import build_submission
from stages.core.common.dataio import read_questions
from stages.core.common.params import ParamError, section
from stages.core.common.values import BLANK
from stages.core.llm.protocol import Completion


@pytest.mark.parametrize("question,kind,unit", [
    # numeric, with the unit the question names
    ("What was the total electricity consumption of the pods in 2023, in megawatt-hours?", "numeric", "MWh"),
    ("How many kWh did training BERT use?", "numeric", "kWh"),
    ("What is the model size in gigabytes (GB) for the LLaMA-33B model?", "numeric", "GB"),
    ("What is the projected maximum batch size (in samples) for fine-tuning Mixtral?", "numeric", "samples"),
    ("What percentage of total compute demand does inference account for?", "numeric", "percent"),
    ("By what factor did caching improve power efficiency?", "numeric", "multiplier"),
    ("How many GPUs were used to train Grok-1?", "numeric", "GPUs"),
    ("How many AWS hardware components were kept out of landfills in 2023?", "numeric", "components"),
    ("How many more tons of CO2e did Llama 3 emit than Gemma?", "numeric", "tCO2e"),
    ("What is the CO2 in pounds from training BERT for 79 hours on 64 V100 GPUs?", "numeric", "lbs"),
    ("How many liters of water were consumed to pretrain Falcon-180B?", "numeric", "liters"),
    ("What was Apple's total net sales in fiscal 2023, in millions of dollars?", "numeric", "million USD"),
    ("How much did the company spend on research and development in 2022?", "numeric", "USD"),
    ("What was the average hourly price of a T4 spot instance?", "numeric", "USD/h"),
    ("What was the operating margin of the Services segment?", "numeric", "percent"),
    ("What energy per generation did Llama 3.1 70B use in the ML.ENERGY benchmark, in joules?", "numeric", "J"),
    ("What is the default width of the rule, in em?", "numeric", "em"),
    ("How many times was the package downloaded in 2019?", "numeric", BLANK),  # a count, not a multiplier
    ("How many times more energy did the 72B model use than the 7B?", "numeric", "multiplier"),
    # True/False and yes/no
    ("True or False: TPUs use less power than GPUs.", "true_false", BLANK),
    ("Did the company repurchase shares during the quarter?", "true_false", BLANK),
    ("Is Microsoft's cloud revenue larger than its gaming revenue?", "true_false", BLANK),
    # a choice or a wh-question after a clause is not yes/no
    ("Did revenue rise or fall in 2023?", "text", BLANK),
    ("Had the model been trained to completion, what range of CO2 emissions (metric tons) would it emit?",
     "range", "metric tons"),
    # range
    ("What range of PUE did the provider report?", "range", "PUE"),
    ("Between roughly what percentages of maximum power did usage fluctuate?", "range", "percent"),
    # names
    ("Which library does the benchmark use to measure energy?", "text", BLANK),
    ("What is the name of the benchmark suite for inference energy?", "text", BLANK),
    ("What dataset of 5,842 labeled entries was used?", "text", BLANK),
    ("What is the term for water withdrawal minus water discharge?", "text", BLANK),
    ("What is the version number of setspace.sty?", "text", BLANK),
    # free explanations
    ("What drove the increase in gross margin in fiscal 2023?", "explain", BLANK),
    ("Why did operating expenses grow faster than revenue?", "explain", BLANK),
    ("Explain the main risks the company lists for its supply chain.", "explain", BLANK),
    ("How did foreign exchange rates affect net sales?", "explain", BLANK),
    ("Describe the company's share repurchase program.", "explain", BLANK),
    ("What were the main factors behind the decline in PC sales?", "explain", BLANK),
])
def test_kind_and_unit_from_the_question_alone(question, kind, unit):
    got = infer_type(question)
    assert (got.kind, got.unit) == (kind, unit)
    assert got.inferred


def test_a_unit_next_to_a_number_is_given_not_asked_and_abbreviations_keep_their_case():
    # "79 hours" and "64 V100 GPUs" are stated; "ML.ENERGY" is no mL
    assert infer_unit("How much energy did 64 GPUs use over 79 hours?") == "kWh"
    assert infer_unit("In the ML.ENERGY benchmark, by what factor did TDP overestimate energy?") == "multiplier"
    assert infer_unit("How many 500 mL bottles of water does one completion drink?") == "bottles"
    assert infer_unit("How many H100 GPU hours were used in total?") == "GPU hours"


def test_unit_words_from_params_extend_the_vocabulary():
    q = "What were diluted earnings in EPS terms for the quarter, in EPS?"
    assert infer_unit(q) != "USD per share"
    assert infer_unit(q, {"EPS": "USD per share"}) == "USD per share"
    assert infer_type("What was the backlog in crores?", {"crores": "INR crore"}).unit == "INR crore"


def test_infer_unit_modes_keep_given_units():
    q = "Is the Services segment larger than Wearables?"
    # WattBot: the unit column present with is_blank is a name answer, as always
    assert question_type(q, "is_blank", "auto").kind == "text"
    assert question_type("How many kWh did it use?", "MWh", "auto") == question_type("How many kWh?", "MWh", "never")
    assert question_type("How many kWh did it use?", "MWh", "auto").unit == "MWh"
    assert not question_type("How many kWh did it use?", "MWh", "auto").inferred
    # no unit column, or a blank cell: inferred
    for missing in ("", "  ", None):
        t = question_type(q, missing, "auto")
        assert (t.kind, t.unit, t.inferred) == ("true_false", BLANK, True)
    assert question_type(q, "", "never").kind == "text"
    # always: the file's unit ignored (to measure the inference against it)
    assert question_type("How many kWh did it use?", "MWh", "always").unit == "kWh"


def test_infer_unit_params_are_validated():
    base = {"answer": {}}
    assert section(AnswerParams, "answer", base).infer_unit == "auto"
    with pytest.raises(ParamError, match="answer.infer_unit"):
        section(AnswerParams, "answer", {"answer": {"infer_unit": "sometimes"}})
    with pytest.raises(ParamError, match="answer.unit_words"):
        section(AnswerParams, "answer", {"answer": {"unit_words": {"eps": ""}}})


UNITS = [ContextBlock("apple-10k-2023", "Gross margin rose because of a favourable mix of Services and cost savings."),
         ContextBlock("msft-10q-q1", "Revenue was $56.5 billion, up 13%.")]


@pytest.mark.parametrize("reply", ["G", "}", "time", "]12.8%", "12.8 % 3", "apple-10k-2023", "Apple 10-K 2023",
                                   "Apple Inc.", "", "   ", None, 12.8, "null", "is_blank"])
def test_an_explanation_that_is_no_answer_is_rejected(reply):
    assert reader.explanation(reply, UNITS) is None
    data = {"units": [1], "answer": reply}
    assert reader.read_reply("explain", BLANK, data, UNITS).is_blank


def test_an_explanation_is_kept_whole_sentences_and_cites_its_units():
    said = "A favourable mix of Services and cost savings drove the higher gross margin."
    r = reader.read_reply("explain", BLANK, {"units": [1], "answer": said}, UNITS)
    assert (r.value, r.pointers, r.grounded) == (said, (1,), True)
    assert reader.refs_for(r, UNITS) == ["apple-10k-2023"]
    # cut at the schema's maxLength: the unfinished sentence goes
    head = "Services grew. Costs fell as suppliers cut prices. " * 4
    cut = head + "Foreign exchange hurt the result in Europe and " * 4
    cut = cut[:reader.EXPLAIN_MAX_CHARS - 1]
    assert reader.explanation(cut, UNITS) == head.strip()
    schema = prompt.reply_schema("explain", 2)
    assert schema["properties"]["answer"] == {"type": "string", "maxLength": reader.EXPLAIN_MAX_CHARS}
    assert prompt.reply_schema("text", 2)["properties"]["answer"]["maxLength"] == reader.MAX_TEXT_CHARS
    assert "full sentences" in prompt.answer_instruction("explain", BLANK)


def test_a_number_without_any_unit_is_asked_in_the_units_own():
    msg = prompt.user_message("How much did it grow?", BLANK, "numeric", UNITS)
    assert "Answer unit" not in msg and "is_blank" not in msg
    assert "the answer in the unit the units state" in msg


@dataclass
class ByKind:
    """Replies by the schema's name and the context level; records each request's user message."""

    replies: dict[tuple[str, int], str]
    calls: list[tuple[str, int, int]] = field(default_factory=list)  # (schema name, level, max_tokens)
    messages: list[str] = field(default_factory=list)

    def complete(self, messages, *, temperature, seed, max_tokens, response_format=None, top_logprobs=0):
        name = response_format["json_schema"]["name"]
        level = len(response_format["json_schema"]["schema"]["properties"]["units"]["items"]["enum"]) - 1
        self.calls.append((name, level, max_tokens))
        self.messages.append(messages[-1]["content"])
        return Completion(text=self.replies[(name, level)], prompt_tokens=50, completion_tokens=10,
                          finish_reason="stop")


LEVELS = [[ContextBlock("acme-10k", "Acme's revenue was 1,200 million dollars. Margins rose on lower freight costs.")],
          [ContextBlock("acme-10k", "Acme's revenue was 1,200 million dollars. Margins rose on lower freight costs."),
           ContextBlock("acme-10q", "Acme bought back 3 million shares in the quarter.")]]


def test_a_questions_csv_without_answer_unit_runs_through_the_answer_driver(tmp_path: Path):
    csv = tmp_path / "questions.csv"
    csv.write_text("id,question\n"
                   "n1,\"What was Acme's revenue in 2023, in millions of dollars?\"\n"
                   "y1,Did Acme buy back shares in the quarter?\n"
                   "e1,What drove Acme's higher margins?\n")
    questions = read_questions(csv)
    assert questions["answer_unit"].to_list() == ["", "", ""]
    llm = ByKind({("answer_numeric", 0): '{"units": [1], "value": 1200}',
                  ("answer_true_false", 0): '{"units": [1], "answer": true}',
                  ("answer_true_false", 1): '{"units": [2], "answer": true}',
                  ("answer_explain", 0): '{"units": [1], "answer": "G"}',  # a stray token: retried wider
                  ("answer_explain", 1): '{"units": [1], "answer": "Lower freight costs raised the margins."}'})
    ctx = {q: LEVELS for q in ("n1", "y1", "e1")}
    params = AnswerParams(demos=[], max_retries=1)
    rows = answer_members(llm, questions, ctx, params, EnsembleParams(n=1),
                          MemberRun("m", {"acme-10k", "acme-10q"}, max_concurrency=1))[0]
    by_id = {r["question_id"]: r for r in rows}
    assert (by_id["n1"]["answer_value"], by_id["n1"]["answer_unit"]) == ("1200", "million USD")
    assert by_id["y1"]["answer_value"] == "1" and by_id["y1"]["ref_id"] == ["acme-10k"]
    assert by_id["e1"]["answer_value"] == "Lower freight costs raised the margins." and by_id["e1"]["attempts"] == 2
    assert ("answer_explain", 0, EXPLAIN_MAX_TOKENS) in llm.calls
    assert ("answer_numeric", 0, MAX_TOKENS) in llm.calls
    numeric_msg = next(m for m in llm.messages if "Question: What was Acme's revenue" in m)
    assert "Answer unit: million USD" in numeric_msg
    # the submission writes the inferred unit where the questions file has none, and the sentence as the answer
    answers = [Answer(r["question_id"], r["answer"], r["answer_value"], r["answer_unit"], r["ref_id"],
                      r["explanation"], r["supporting_materials"], r["grounded"]) for r in rows]
    sub = {r["id"]: r for r in build_submission(questions, answers, {}).iter_rows(named=True)}
    assert sub["n1"]["answer_unit"] == "million USD" and sub["y1"]["answer_unit"] == BLANK
    assert sub["e1"]["answer"] == sub["e1"]["answer_value"] == "Lower freight costs raised the margins."
    # an explanation that stays a stray token is left blank, never submitted
    bad = ByKind({("answer_true_false", 0): '{"units": [1], "answer": true}',  # the content-free prior
                  ("answer_explain", 0): '{"units": [1], "answer": "}"}',
                  ("answer_explain", 1): '{"units": [2], "answer": "acme-10q"}'})
    row = answer_members(bad, questions.filter(questions["id"] == "e1"), ctx, params, EnsembleParams(n=1),
                         MemberRun("m", max_concurrency=1))[0][0]
    assert row["is_blank"] and row["attempts"] == 2


def test_wattbot_units_still_decide_with_infer_unit_auto(tmp_path: Path):
    """The unit column present: is_blank stays a name, the given unit is the prompt's (requests unchanged)."""
    csv = tmp_path / "q.csv"
    csv.write_text("id,question,answer_unit\n"
                   "t1,Did Acme buy back shares in the quarter?,is_blank\n"
                   "n1,\"What was Acme's revenue in 2023, in millions of dollars?\",USD\n")
    llm = ByKind({("answer_true_false", 0): '{"units": [1], "answer": true}',  # the content-free prior
                  ("answer_text", 0): '{"units": [1], "answer": "yes"}',
                  ("answer_numeric", 0): '{"units": [1], "value": 1200}'})
    rows = answer_members(llm, read_questions(csv), {"t1": LEVELS[:1], "n1": LEVELS[:1]},
                          AnswerParams(demos=[], max_retries=0), EnsembleParams(n=1),
                          MemberRun("m", max_concurrency=1))[0]
    assert [c[0] for c in llm.calls] == ["answer_true_false", "answer_text", "answer_numeric"]
    assert "Answer unit: USD" in llm.messages[2] and rows[1]["answer_unit"] == "USD"
    json.dumps(rows, default=str)  # rows stay plain data


@pytest.mark.llm
def test_no_unit_questions_with_the_real_local_model(tmp_path: Path, monkeypatch):
    """The embedded llama.cpp server (0.5B test model) over HTTP: a questions CSV without an
    answer_unit column gets a True/False, a number in the inferred unit and an explanation that is
    a sentence or blank, never a stray token."""
    from stages.core.llm.params import LLMParams
    from stages.core.llm.session import llm_session

    monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "cache"))
    csv = tmp_path / "questions.csv"
    csv.write_text("id,question\n"
                   "n1,\"What was Acme's revenue in 2023, in millions of dollars?\"\n"
                   "y1,Did Acme buy back shares in the quarter?\n"
                   "e1,What drove Acme's higher margins in 2023?\n")
    levels = [[ContextBlock("acme-10k", "Acme's revenue was 1,200 million dollars in 2023. Margins rose because "
                                        "freight costs fell and the product mix shifted to software."),
               ContextBlock("acme-10q", "Acme bought back 3 million shares in the quarter.")]]
    with llm_session(LLMParams(model="qwen2.5-coder-0.5b", n_ctx=4096)) as llm:
        rows = answer_members(llm, read_questions(csv), {q: levels for q in ("n1", "y1", "e1")},
                              AnswerParams(demos=[], max_retries=0), EnsembleParams(n=1),
                              MemberRun("qwen2.5-coder-0.5b", {"acme-10k", "acme-10q"}, max_concurrency=1))[0]
    by_id = {r["question_id"]: r for r in rows}
    assert by_id["n1"]["answer_unit"] == "million USD" and by_id["n1"]["attempts"] == 1
    assert by_id["y1"]["answer_value"] in ("0", "1")
    said = by_id["e1"]["answer_value"]
    assert by_id["e1"]["attempts"] == 1
    assert said == BLANK or reader.explanation(said, []) == said  # a sentence of >= 4 words, or blank
