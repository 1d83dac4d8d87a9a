"""The data the HTML run report and the ask page are built from (stages/core/score/report_data.py,
report_html.py, stages/core/tools/serve.py, compare_html.py); the browser test (test_ui_browser.py)
checks what a person sees."""
from __future__ import annotations

import threading

import polars as pl
import pytest

from stages.core.answer.ensemble import MEMBER_SCHEMA_OVERRIDES, MemberRun, answer_members
from stages.core.answer.params import AnswerParams, EnsembleParams
from stages.core.answer.record import context_blocks
from stages.core.llm.protocol import Completion
from stages.core.retrieve.search import CONTEXT_SCHEMA
from stages.core.score.report_data import RunInputs, build_report_data, holds_quote, holds_value, section_of
from stages.core.score.report_html import render_report
from stages.core.score.verdicts import score_submission

XSS = "<script>alert(1)</script>"
HTML_REPLY = "<b>x</b>"


def ctx_rows(qid: str, attempt: int, units: list[tuple[str, str, str]]) -> list[dict]:
    return [{"question_id": qid, "attempt": attempt, "rank": r, "node_id": node, "doc_id": doc, "score": 1.0 - r / 10,
             "frequency": 1, "source": ["dense", "bm25", "both"][r % 3], "page": r + 1, "n_tokens": 10, "media": None,
             "text": text} for r, (node, doc, text) in enumerate(units)]


L0 = [("solar:sec1:p0", "solar", f"The farm is large. {XSS}"),
      ("solar:sec2:p0", "solar", "The solar farm generates 150 MWh of electricity per year."),
      ("gpu:sec1:p0", "gpu", "The A100 GPU has a peak power draw of 400 W.")]
L1 = [*L0, ("water:sec2:p0", "water", "Training consumed 700,000 liters of clean freshwater in total.")]
QUESTIONS = pl.DataFrame({
    "id": ["q1", "q2"],
    "question": ["How much electricity does the solar farm generate per year?", "How much water did training use?"],
    "answer": ["150 MWh", "700000 liters"], "answer_value": ["150", "700000"], "answer_unit": ["MWh", "liters"],
    "ref_id": ["['solar']", "['water']"], "ref_url": ["is_blank"] * 2,
    "supporting_materials": ["The solar farm generates 150 MWh of electricity per year.", "is_blank"],
    "explanation": ["Quote", "Quote"]})
CONTEXTS = pl.DataFrame(ctx_rows("q1", 0, L0) + ctx_rows("q1", 1, L1) + ctx_rows("q2", 0, L0) + ctx_rows("q2", 1, L1),
                        schema=CONTEXT_SCHEMA)


class RecordingLLM:
    """Replies by the question in the prompt; records every user message."""

    def __init__(self) -> None:
        self.user: list[str] = []

    def complete(self, messages, *, temperature, seed, max_tokens, response_format=None, top_logprobs=0):
        msg = messages[-1]["content"]
        self.user.append(msg)
        n = len(response_format["json_schema"]["schema"]["properties"]["units"]["items"]["enum"])
        if "water" in msg:  # the first level lacks the water unit: no value, then the retry finds it
            text = '{"units": [4], "value": 700000}' if n == 4 else '{"units": [1]}'
        else:  # reversed view: the 150 MWh unit is unit 2 either way in a 3-unit level
            text = '{"units": [2], "value": 150}'
        return Completion(text=text, prompt_tokens=10, completion_tokens=5, finish_reason="stop")


def run_members(ens: EnsembleParams, ap: AnswerParams | None = None) -> tuple[list[pl.DataFrame], RecordingLLM]:
    ap = ap or AnswerParams(max_retries=1, demos=[])
    llm = RecordingLLM()
    rows = answer_members(llm, QUESTIONS.select("id", "question", "answer_unit"), context_blocks(CONTEXTS), ap,
                          ens, MemberRun("m", {"solar", "gpu", "water"}))
    return [pl.DataFrame(m, schema_overrides=MEMBER_SCHEMA_OVERRIDES) for m in rows], llm


def submission_of(members: list[pl.DataFrame]) -> pl.DataFrame:
    m = members[0]
    return pl.DataFrame({"id": m["question_id"], "answer_value": m["answer_value"],
                         "answer_unit": m["answer_unit"], "ref_id": [str(r.to_list()) for r in m["ref_id"]],
                         "ref_url": ["is_blank"] * m.height, "supporting_materials": m["supporting_materials"],
                         "explanation": m["explanation"]})


def report(members: list[pl.DataFrame], ens: EnsembleParams, labelled: bool = True,
           ap: AnswerParams | None = None) -> dict:
    ap = ap or AnswerParams(max_retries=1, demos=[])
    sub = submission_of(members)
    questions = QUESTIONS if labelled else QUESTIONS.select("id", "question", "answer_unit")
    run = RunInputs(questions, sub, CONTEXTS, members, {"solar:sec2": "2 Results", "water:sec2": "2 Findings"}, ap,
                    ens, "t")
    if not labelled:
        return build_report_data(run)
    summary, table = score_submission(QUESTIONS, sub)
    return build_report_data(run, table, summary, n_boot=500)


def test_member_rows_record_replies_pointers_and_the_level_used() -> None:
    members, _ = run_members(EnsembleParams(n=1))
    q1, q2 = members[0].iter_rows(named=True)
    assert q1["pointers"] == [2] and q1["level"] == 0 and q1["view"] == "reversed" and q1["raw"] == [
        '{"units": [2], "value": 150}']
    # retried with the wider level; the water unit is unit 1 of the reversed order, where the value is found
    assert q2["level"] == 1 and q2["pointers"] == [1] and len(q2["raw"]) == 2
    assert q2["answer_value"] == "700000"


def test_the_context_is_numbered_as_the_reader_saw_it_and_the_prompt_is_the_one_sent() -> None:
    ens = EnsembleParams(n=1)
    members, llm = run_members(ens)
    data = report(members, ens)
    q1 = data["questions"][0]
    assert list(q1["contexts"]) == ["reversed/0"]  # member 0 reads the context reversed (ensemble.MEMBER_VIEWS)
    rev = q1["contexts"]["reversed/0"]
    assert [u["node_id"] for u in rev] == [n for n, _, _ in L0[::-1]] and [u["n"] for u in rev] == [1, 2, 3]
    # member 0 pointed at its unit 2 of the reversed order (solar:sec2)
    assert [u["pointed_by"] for u in rev] == [[], [0], []]
    assert rev[1]["section"] == "solar:sec2" and rev[1]["section_title"] == "2 Results"
    assert rev[1]["source"] == "bm25" and rev[1]["rank"] == 1 and rev[1]["page"] == 2
    # the gold value and the gold quote are found in the gold document's unit only
    assert [u["gold_value"] for u in rev] == [False, True, False] and rev[1]["gold_quote"]
    # the rebuilt prompt is exactly the user message each member sent
    prompts = [m["prompt"] for q in data["questions"] for m in q["members"]]
    assert set(prompts) <= set(llm.user) and prompts[0] in llm.user
    q2 = data["questions"][1]
    assert q2["members"][0]["attempt"] == 1 and q2["primary"] == "reversed/1"
    assert q2["contexts"]["reversed/1"][0]["pointed_by"] == [0] and q2["contexts"]["reversed/1"][0]["gold_value"]
    assert q2["members"][0]["prompt"] in llm.user
    assert q1["correct"] and q1["lost"] == 0 and q1["miss"] is False and q1["category"] == "correct"
    assert data["head"]["low"] <= data["head"]["score"] <= data["head"]["high"]


def test_retrieval_miss_and_unlabelled_runs() -> None:
    ens = EnsembleParams(n=1)
    members, _ = run_members(ens)
    labels = QUESTIONS.with_columns(pl.when(pl.col("id") == "q1").then(pl.lit("['nowhere']")).otherwise("ref_id")
                                    .alias("ref_id"))
    sub = submission_of(members)
    summary, table = score_submission(labels, sub)
    run = RunInputs(labels, sub, CONTEXTS, members, {}, AnswerParams(demos=[]), ens)
    data = build_report_data(run, table, summary, n_boot=200)
    assert data["questions"][0]["miss"] is True
    # q2: the gold document only came with the retry, which the member read: not a miss, though gold@ says none
    assert data["questions"][1]["miss"] is False and data["questions"][1]["gold_rank"] is None
    assert data["head"]["misses"] == 1
    bare = report(members, ens, labelled=False)
    assert not bare["labelled"] and bare["head"] is None and bare["categories"] == []
    assert all(q["gold"] is None and q["category"] is None and q["credits"] is None for q in bare["questions"])
    assert bare["questions"][0]["contexts"]["reversed/0"][1]["pointed_by"] == [0]  # the rest is the same
    html = render_report(bare)
    assert "Unlabelled questions" in html and 'id="f-cat"' not in html and "q-q1" in html


def test_markup_in_documents_and_replies_is_text() -> None:
    ens = EnsembleParams(n=1)
    members, _ = run_members(ens)
    members[0] = members[0].with_columns(pl.Series("raw", [[HTML_REPLY], [HTML_REPLY]], dtype=pl.List(pl.String)))
    html = render_report(report(members, ens), {})
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and XSS not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html and HTML_REPLY not in html
    assert html.count("<script>") == 1  # the page's own inline script only
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html  # nothing to fetch


def test_gold_matching() -> None:
    assert holds_value("It produced 4.3 net tCO2e.", "4.3", "tCO2e", "numeric")
    assert holds_value("between 10 and 50 responses", "[10,50]", "responses", "range")
    assert not holds_value("It produced 4.4 net tCO2e.", "4.3", "tCO2e", "numeric")
    assert holds_value("We present the ML.ENERGY Benchmark.", "ML.ENERGY Benchmark", "is_blank", "text")
    assert not holds_value("True.", "1", "is_blank", "true_false")
    assert holds_quote("... Training GShard-600B used 24 MWh and produced 4.3 net tCO 2 e ...",
                       '"Training GShard-600B used 24 MWh and produced 4.3 net tCO 2 e."')
    assert not holds_quote("GShard used energy.", "Training GShard-600B used 24 MWh and produced")
    assert section_of("d:sec2:p3:s1", {"d:sec2": "x", "d:sec2:p3": "sub"}) == "d:sec2:p3"
    assert section_of("d:p1", {"d:sec2": "x"}) is None


# --- the ask page (no browser, no LLM: ask_question is replaced by a scripted result) --------

class _Tree:
    nodes: dict = {}

    def paragraph_of(self, node_id):
        return None


class _Retriever:
    tree = _Tree()


def _service(monkeypatch, barrier: threading.Barrier | None = None):
    from stages.core.retrieve.ranking import RetrievedUnit
    from stages.core.tools import serve
    from stages.core.tools.ask import AskParams, AskResult

    params = AskParams(None, None, AnswerParams(demos=[]), EnsembleParams(n=1), "m")

    def fake_ask(question, unit, p, retriever, llm, corpus_ids, urls):
        if barrier is not None:  # every request inside the pipeline at once
            barrier.wait(timeout=120)
        units = [RetrievedUnit("solar:sec1:p0", "solar", ["solar:sec1:p0"], f"{question} {XSS}", 0.9, 1, {"dense"}),
                 RetrievedUnit("solar:sec2:p0", "solar", ["solar:sec2:p0"], "It makes 150 MWh.", 0.5, 1, {"bm25"})]
        member = {"question_id": "ask", "answer": "150", "answer_value": "150", "answer_unit": unit,
                  "ref_id": ["solar"], "explanation": "is_blank", "supporting_materials": "It makes 150 MWh.",
                  "is_blank": False, "attempts": 1, "prompt_tokens": 1, "completion_tokens": 1, "latency_s": 0.5,
                  "cache_hits": 0, "model": "m", "seed": 0, "grounded": True, "prompt_evaluated": 1,
                  "skipped": False, "shared": 0, "raw": [HTML_REPLY], "pointers": [2], "view": "as_is", "level": 0}
        sub = {"id": "ask", "question": question, "answer": "150", "answer_value": "150", "answer_unit": unit,
               "ref_id": "['solar']", "ref_url": "['https://example.org/solar']",
               "supporting_materials": "It makes 150 MWh.", "explanation": "is_blank"}
        return AskResult([question], False, [units], [member], None, sub)

    monkeypatch.setattr(serve, "ask_question", fake_ask)
    svc = serve.AskService(params, _Retriever(), None, {"solar"}, {"solar": "https://example.org/solar"},
                           {"solar": "Solar report"}, {"is_blank", "MWh"}, {"solar:sec2": "2 Results"})
    return serve.create_app(svc).test_client()


def test_ask_page_answers_and_shows_data_as_text(monkeypatch) -> None:
    client = _service(monkeypatch)
    r = client.post("/ask", data={"question": "How much <i>energy</i>?", "unit": "MWh"})
    html = r.get_data(as_text=True)
    assert r.status_code == 200 and 'id="answer-value">150<' in html
    assert "https://example.org/solar" in html and "Solar report" in html and "2 Results" in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and XSS not in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<i>energy</i>" not in html
    j = client.post("/api/ask", json={"question": "How much?", "unit": "MWh"}).get_json()
    assert j["answer_value"] == "150" and j["refs"][0]["url"] == "https://example.org/solar"
    assert [u["pointed_by"] for u in j["context"]] == [[], [0]] and j["timing"]["llm_s"] == pytest.approx(0.5)


@pytest.mark.parametrize("form, message", [({"question": "  "}, "empty"),
                                           ({"question": "x" * 2001}, "at most 2000"),
                                           ({"question": "q?", "unit": "parsecs"}, "Unknown answer unit"),
                                           ({"question": "q?", "unit": "u" * 101}, "at most 100")])
def test_ask_page_refuses_bad_requests_with_a_message(monkeypatch, form, message) -> None:
    client = _service(monkeypatch)
    r = client.post("/ask", data=form)
    assert r.status_code == 400 and message in r.get_data(as_text=True)
    j = client.post("/api/ask", json=form)
    assert j.status_code == 400 and message in j.get_json()["error"]
    assert client.post("/api/ask", data="not json").status_code == 400


def test_a_failure_is_a_message_not_a_traceback(monkeypatch) -> None:
    from stages.core.tools import serve

    client = _service(monkeypatch)

    def boom(*a, **k):
        raise RuntimeError("index is gone\nsecond line")

    monkeypatch.setattr(serve, "ask_question", boom)
    r = client.post("/ask", data={"question": "q?"})
    body = r.get_data(as_text=True)
    assert r.status_code == 500 and "RuntimeError: index is gone" in body and "Traceback" not in body
    assert "second line" not in body
    assert client.post("/api/ask", json={"question": "q?"}).get_json()["error"].startswith("The question could not")


def test_concurrent_requests_get_their_own_answers(monkeypatch) -> None:
    client = _service(monkeypatch, barrier=threading.Barrier(8))
    out: dict[int, str] = {}

    def one(i: int) -> None:
        out[i] = client.post("/api/ask", json={"question": f"question number {i}?", "unit": "MWh"}).get_json()[
            "context"][0]["text"]

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(out[i].startswith(f"question number {i}?") for i in range(8))


def test_compare_page_shows_flipped_questions_with_both_contexts(tmp_path) -> None:
    import yaml

    from stages.core.tools.compare import Run, compare
    from stages.core.tools.compare_html import compare_page

    ens = EnsembleParams(n=1)
    sides = []
    for name, value in (("a", "150"), ("b", "999")):
        members, _ = run_members(ens)
        if name == "b":  # B answers q1 wrong
            members[0] = members[0].with_columns(pl.when(pl.col("question_id") == "q1").then(pl.lit(value))
                                                 .otherwise("answer_value").alias("answer_value"))
        root = tmp_path / name
        (root / "artifacts" / "answers").mkdir(parents=True)
        (root / "artifacts" / "retrieve").mkdir(parents=True)
        (root / "submissions").mkdir()
        members[0].write_parquet(root / "artifacts" / "answers" / "run_0.parquet")
        CONTEXTS.filter(pl.col("attempt") == 0).write_parquet(root / "artifacts" / "retrieve" / "contexts.parquet")
        CONTEXTS.filter(pl.col("attempt") > 0).write_parquet(root / "artifacts" / "retrieve" / "retry_contexts.parquet")
        sub = submission_of(members)
        sub.write_csv(root / "submissions" / "submission.csv")
        (root / "params.yaml").write_text(yaml.safe_dump({"ensemble": {"n": 1}, "answer": {"demos": []}}))
        sides.append((root, sub))
    c = compare(QUESTIONS, [Run("a", sides[0][1])], [Run("b", sides[1][1])], n_boot=200)
    html = compare_page(c, QUESTIONS, str(sides[0][0]), str(sides[1][0]), n_boot=200)
    assert 'id="flip-q1"' in html and 'id="flip-q2"' not in html and "broken" in html
    assert html.count('class="context"') >= 2  # both sides' contexts
    assert "999" in html and "&lt;script&gt;" in html and XSS not in html
