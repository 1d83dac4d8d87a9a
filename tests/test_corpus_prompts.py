"""The `corpus:` section fills every system prompt; WattBot's params give today's prompts byte for byte.

The frozen strings and hashes below were computed with the code before the section
existed (the prompts then named WattBot's corpus in code): the LLM response cache is
keyed by the messages, so identical messages keep every cached answer.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest

from stages.core.answer import free_reader
from stages.core.answer import typed_prompt as reader
from stages.core.answer.demos import demo_messages
from stages.core.answer.kinds import question_kind
from stages.core.answer.params import AnswerParams
from stages.core.answer.record import ContextBlock
from stages.core.answer.typed_answer import typed_prefixes
from stages.core.common.corpus import CorpusParams
from stages.core.common.params import ParamError, load_params, section
from stages.core.plan.planner import PlanParams, plan_queries, planner_system

ROOT = Path(__file__).resolve().parents[1]

OLD_TYPED = (
    "You answer a question about AI energy use, emissions, water and cost from numbered context units "
    "taken from research papers and reports. Reply with JSON only. First list in \"units\" the numbers "
    "of the units that state the answer, then give the answer in the requested field and unit. Copy "
    "numbers from the units; convert them only when the question's unit differs. Use only the context; "
    "if no unit states the answer, give null."
)
OLD_FREE = (
    "You answer questions about AI energy use, emissions, water and cost using ONLY the given context "
    "from research papers and reports. You cite the ref_id of the blocks that hold the answer. If the "
    "context does not contain the answer, you abstain with is_blank."
)
OLD_PLANNER = (
    "You write search queries for a retrieval system over research papers and reports "
    "about the energy use, carbon emissions, water use and cost of AI and data centers."
)
UNITS = [ContextBlock("patterson2021", "Training GShard emitted 4.3 tCO2e of net emissions."),
         ContextBlock("chen2024", "| Model | Energy (MWh) |\n| --- | --- |\n| GPT-3 | 1,287 |", "table")]
QUESTIONS = [("What were the net CO2e emissions of GShard?", "tCO2e"),
             ("What range of energy per query was reported?", "Wh"),
             ("True or False: GPT-3 training used 1,287 MWh.", "is_blank"),
             ("Which model had the largest training energy?", "is_blank")]
# sha256 of json.dumps(messages) with the pre-change code and params.yaml (demos from data/wattbot/dev_QA.csv)
OLD_HASHES = {
    "typed/demos/numeric": "efdc4e539c74872279393844700d086205a72be6c7cd1c9ed151d9473aebe794",
    "typed/bare/numeric": "b7ca2342fb8610a3c0f5e90471d08215f5e8f6d5f9f60b150479535ea9e030c7",
    "free/numeric": "b1cfef06c58bc941fb4201d288b040098d13a3337da18bea1c82b6fb60f08bae",
    "typed/demos/range": "8977be92fadddb73c3a2610af40f18897b1cf6ea988f6c9b7852516283e14823",
    "typed/bare/range": "71b933f97dd8a2b287a3ab52ba1abf868a159563dae012e483f1ffe87423bbee",
    "free/range": "275c48a7065148798e37641db932c1abcdbc84e52fd7b734fb0d6f639e063f5d",
    "typed/demos/true_false": "c6054ee2d30d8e3321124009094d1d26242cec8f98f4daf2fa787ab13c828b30",
    "typed/bare/true_false": "262cf4e9c9b14b1b867c449be897f691c09eb8341a0afb56ce10f503d89c8175",
    "free/true_false": "7e27d3ecd54ff2d2dcb40d9ba1b7ffe87b7ea0e13e895e582f72abfea0a9ee19",
    "typed/demos/text": "431c9dcb4ab50c0a95fdf916b75eab882e87a8f8399fd494e5328fe9245a6758",
    "typed/bare/text": "25829b9cc3485b60adb16e843bc89327a822c985bacd7443de67caa750dead0d",
    "free/text": "1ae8ffcce4f6439460c86bfd0b6ea243875560cf28892949cc61e025cfd124b2",
    "plan": "0174149574296d455603b644dddd23cccd9ee1bae3ddbc8f3f996302126bb25d",
}


class RecordingLLM:
    def __init__(self):
        self.calls = []

    def complete(self, messages, **kw):
        self.calls.append(messages)

        class Reply:
            text = '{"queries": ["a", "b"]}'
        return Reply()


def planner_messages(params: PlanParams, question: str) -> list[dict[str, str]]:
    llm = RecordingLLM()
    plan_queries(question, llm, dataclasses.replace(params, n_queries=4))
    return llm.calls[0]


def _sha(messages) -> str:
    return hashlib.sha256(json.dumps(messages).encode()).hexdigest()


@pytest.fixture(scope="module")
def wattbot():
    params = load_params(ROOT / "params.yaml")
    return section(AnswerParams, "answer", params), section(PlanParams, "plan", params)


def test_wattbot_params_give_the_pre_change_system_prompts(wattbot):
    ap, pp = wattbot
    assert reader.typed_reader_system(ap.corpus) == OLD_TYPED
    assert free_reader.free_reader_system(ap.corpus) == OLD_FREE
    assert planner_system(pp.corpus) == OLD_PLANNER
    assert typed_prefixes(ap).prefix[0]["content"] == OLD_TYPED


def test_wattbot_messages_are_byte_identical_for_each_kind(wattbot):
    ap, pp = wattbot
    system = {"role": "system", "content": reader.typed_reader_system(ap.corpus)}
    prefix = [system, *demo_messages(ROOT / ap.demo_file, ap.demos)]
    got = {}
    for q, unit in QUESTIONS:
        kind = question_kind(q, unit)
        msg = {"role": "user", "content": reader.user_message(q, unit, kind, UNITS)}
        got[f"typed/demos/{kind}"] = _sha([*prefix, msg])
        got[f"typed/bare/{kind}"] = _sha([system, msg])
        got[f"free/{kind}"] = _sha(free_reader.build_messages(q, unit, UNITS, ap.corpus))
    got["plan"] = _sha(planner_messages(pp, QUESTIONS[0][0]))
    assert got == OLD_HASHES


def test_every_prompt_names_the_configured_corpus():
    corpus = CorpusParams(description="court rulings and statutes", topic="tax law",
                          search_topic="taxation of companies")
    typed = reader.typed_reader_system(corpus)
    free = free_reader.build_messages("Q?", "USD", UNITS, corpus)[0]["content"]
    plan = planner_messages(PlanParams(corpus=corpus), "Q?")[0]["content"]
    assert typed.startswith("You answer a question about tax law from numbered context units taken from "
                            "court rulings and statutes.")
    assert free.startswith("You answer questions about tax law using ONLY the given context from court "
                           "rulings and statutes.")
    assert plan == "You write search queries for a retrieval system over court rulings and statutes about " \
                   "taxation of companies."
    # without search_topic the planner uses the topic
    assert planner_system(CorpusParams("court rulings", "tax law")).endswith("over court rulings about tax law.")


def test_the_neutral_default_names_no_wattbot_topic():
    typed = reader.typed_reader_system(CorpusParams())
    free = free_reader.build_messages("Q?", "USD", UNITS)[0]["content"]
    plan = planner_system(PlanParams().corpus)
    assert typed.startswith("You answer a question from numbered context units taken from technical and "
                            "scientific documents.")
    assert free.startswith("You answer questions using ONLY the given context from technical and scientific "
                           "documents.")
    assert plan == "You write search queries for a retrieval system over technical and scientific documents."
    for text in (typed, free, plan):
        assert "energy" not in text and "research papers" not in text


def test_corpus_section_fills_answer_and_plan_params():
    raw = {"answer": {"demos": []}, "plan": {}, "corpus": {"description": "manuals", "topic": "printers"}}
    assert section(AnswerParams, "answer", raw).corpus == CorpusParams("manuals", "printers")
    assert section(PlanParams, "plan", raw).corpus == CorpusParams("manuals", "printers")
    assert section(AnswerParams, "answer", {"answer": {}}).corpus == CorpusParams()  # no section: neutral
    with pytest.raises(ParamError, match=r"answer\.corpus"):
        section(AnswerParams, "answer", {"answer": {"corpus": {"description": "x"}}})
    with pytest.raises(ParamError, match=r"corpus\.colour"):
        section(AnswerParams, "answer", {"answer": {}, "corpus": {"colour": "x"}})
    with pytest.raises(ParamError, match=r"corpus\.description"):
        section(PlanParams, "plan", {"corpus": {"description": " "}})


def test_no_demos_needs_no_demo_file(tmp_path):
    """answer.demos: [] runs without worked examples and never opens answer.demo_file."""
    ap = AnswerParams(demos=[], demo_file=str(tmp_path / "missing.csv"))
    setup = typed_prefixes(ap)
    assert setup.prefix == setup.bare and [m["role"] for m in setup.prefix] == ["system"]
    assert demo_messages(tmp_path / "missing.csv", []) == []
    with pytest.raises(Exception, match="not found"):
        demo_messages(tmp_path / "missing.csv", ["d1"])
