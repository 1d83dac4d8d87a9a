"""Tests of the `stages.ask` helpers: the retry-context loop and the doc → section → unit tree."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl

from stages.core.retrieve.params import RetrieveParams
from stages.core.retrieve.ranking import RetrievedUnit
from stages.core.retrieve.search import retrieve_attempts
from stages.core.tools.ask import context_tree, to_blocks
from stages.core.tree.navigate import TreeView

ROOT = Path(__file__).resolve().parents[1]


def tree() -> TreeView:
    rows = [
        ("d1", None, "document", "d1", 0, "", None, "Doc One"),
        ("d1:sec1", "d1", "section", "d1", 0, "", 1, "2 Results"),
        ("d1:sec1:p0", "d1:sec1", "paragraph", "d1", 0, "The farm makes 150 MWh.", 1, None),
        ("d1:sec1:p1", "d1:sec1", "paragraph", "d1", 1, "It avoids 90 t CO2e.", 1, None),
        ("d1:sec1:p1:s0", "d1:sec1:p1", "sentence", "d1", 0, "It avoids 90 t CO2e.", 1, None),
        ("d1:sec2", "d1", "section", "d1", 1, "", 2, "3 Water"),
        ("d1:sec2:p0", "d1:sec2", "paragraph", "d1", 0, "Cooling uses water.", 2, None),
        ("d2", None, "document", "d2", 0, "", None, "Doc Two"),
        ("d2:sec0", "d2", "section", "d2", 0, "", 1, "1 Intro"),
        ("d2:sec0:p0", "d2:sec0", "paragraph", "d2", 0, "A100 draws 400 W. " * 20, 1, None),
    ]
    cols = ["node_id", "parent_id", "level", "doc_id", "ordinal", "text", "page", "title"]
    return TreeView(pl.DataFrame(rows, schema=cols, orient="row"))


def unit(key: str, score: float, ids: list[str] | None = None, sources: set[str] | None = None) -> RetrievedUnit:
    t = tree()
    ids = ids or [key]
    return RetrievedUnit(key, t[key].doc_id, ids, " ".join(t[i].text for i in ids), score, 2, sources or {"dense"},
                t[key].page, n_tokens=10)


def test_context_tree_groups_doc_section_unit() -> None:
    units = [unit("d1:sec1:p0", 0.9), unit("d2:sec0:p0", 0.8, sources={"dense", "bm25"}),
             unit("d1:sec2:p0", 0.7), unit("d1:sec1:p1:s0", 0.6)]
    text = context_tree(units, tree(), new_from=3, max_chars=40)
    lines = text.splitlines()
    assert lines[0] == "d1  (3 units)  Doc One"
    assert lines[1] == "  § d1:sec1  2 Results"
    assert "#0  d1:sec1:p0  score 0.9000  freq 2  dense p.1  10 tok" in lines[2]
    assert "#3  d1:sec1:p1:s0" in lines[4] and lines[4].lstrip().startswith("+#3")  # added by a retry
    assert "  § d1:sec2  3 Water" in lines
    d2 = lines.index("d2  (1 unit)  Doc Two")
    assert d2 > lines.index("  § d1:sec2  3 Water")  # documents in order of their best unit
    assert "both" in lines[d2 + 2]
    assert any(line.strip().endswith("…") and len(line.strip()) == 40 for line in lines)  # long text cut


def test_retrieve_attempts_widens_and_keeps_previous_units() -> None:
    class StubRetriever:
        def __init__(self) -> None:
            self.calls: list[float] = []

        def retrieve(self, queries: list[str], p: RetrieveParams, answer_unit: str | None = None,
                     factor: float = 1.0) -> list[RetrievedUnit]:
            self.calls.append(factor)
            keys = ["d1:sec1:p0", "d2:sec0:p0", "d1:sec2:p0"][: int(factor)]
            return [unit(k, 1.0 - i / 10) for i, k in enumerate(keys)]

    r = StubRetriever()
    p = RetrieveParams(max_context_tokens=1000)
    attempts = retrieve_attempts(r, ["q"], p, max_retries=2)  # type: ignore[arg-type]
    assert r.calls == [1.0, 2.0, 4.0]  # each retry doubles the depth and budget
    assert [[u.key for u in a] for a in attempts] == [
        ["d1:sec1:p0"], ["d1:sec1:p0", "d2:sec0:p0"], ["d1:sec1:p0", "d2:sec0:p0", "d1:sec2:p0"]]
    blocks = to_blocks(attempts[0])
    assert blocks[0].doc_id == "d1" and blocks[0].text == "The farm makes 150 MWh."


def test_ask_cli_help() -> None:
    r = subprocess.run([sys.executable, "-m", "stages.ask", "--help"], cwd=ROOT, capture_output=True, text=True,
                       timeout=900)  # a hang guard: cold imports took >120 s under load
    assert r.returncode == 0 and "--no-answer" in r.stdout


class _RecordingLLM:
    """Answers every numeric call with unit 1 and 150; records the messages of each call."""

    def __init__(self) -> None:
        self.calls: list[list[dict]] = []

    def complete(self, messages, *, temperature, seed, max_tokens, response_format=None, top_logprobs=0):
        from stages.core.llm.protocol import Completion

        self.calls.append(messages)
        return Completion(text='{"units": [1], "value": 150}', prompt_tokens=10, completion_tokens=5,
                          finish_reason="stop")


def test_ask_answers_through_the_answer_stages_path() -> None:
    """ask_question sends exactly the requests the answer stage sends for the same contexts.parquet rows
    (typed reader, reversed view, no free-reader prompt) and gives the vote stage's submission row."""
    from stages.core.answer.ensemble import MemberRun, answer_members
    from stages.core.answer.params import AnswerParams, EnsembleParams
    from stages.core.answer.record import context_blocks
    from stages.core.answer.submission import build_submission
    from stages.core.answer.voting import member_answers, vote_all
    from stages.core.plan.planner import PlanParams
    from stages.core.retrieve.search import CONTEXT_SCHEMA, context_rows
    from stages.core.tools.ask import AskParams, ask_question

    class StubRetriever:
        def retrieve(self, queries, p, answer_unit=None, factor=1.0):
            return [unit("d1:sec1:p0", 0.9), unit("d1:sec2:p0", 0.5)]

    params = AskParams(PlanParams(n_queries=1), RetrieveParams(), AnswerParams(),
                       EnsembleParams(n=1), "m")
    llm = _RecordingLLM()
    res = ask_question("What does the farm make?", "MWh", params, StubRetriever(), llm, {"d1", "d2"},
                       {"d1": "https://d1"})
    # the answer stage's path: the retrieve stage's rows, read back as the answer stage reads them
    stage_llm = _RecordingLLM()
    rows = [r for k, a in enumerate(res.attempts) for r in context_rows("ask", k, a)]
    qs = pl.DataFrame({"id": ["ask"], "question": ["What does the farm make?"], "answer_unit": ["MWh"]})
    members = answer_members(stage_llm, qs, context_blocks(pl.DataFrame(rows, schema=CONTEXT_SCHEMA)),
                             params.answer, params.ensemble, MemberRun("m", {"d1", "d2"}))
    voted = vote_all([member_answers(pl.DataFrame(m)) for m in members], ["ask"])
    assert llm.calls == stage_llm.calls and len(llm.calls) == 2  # the content-free True/False prior, the question
    user = llm.calls[1][-1]["content"]
    assert user.index("[1] d1: Cooling uses water.") < user.index("[2] d1: The farm makes 150 MWh.")  # reversed
    assert '"value"' in user and "ref_id=" not in user  # the typed reader's prompt, not the free reader's
    assert res.submission == build_submission(qs, voted, {"d1": "https://d1"}).row(0, named=True)
    assert res.submission["answer_value"] == "150" and res.submission["ref_id"] == "['d1']"
    assert res.submission["ref_url"] == "['https://d1']"
