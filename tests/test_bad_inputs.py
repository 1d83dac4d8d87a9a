"""Bad input gets a clear error, a counted warning or a correct answer: never a traceback, never a
silent wrong answer (issue 47). One table per entry point: every stage's main, stages.ask,
stages.serve and stages.score, run in this process on a tiny project in tmp_path (two short text
documents, one PDF, three questions) with the fake OpenAI endpoint for the LLM and the embeddings.

Each row says what a user feeds in and the exact outcome: the error's one line (naming the file,
row or key and what is wrong), the warning with its count, or the right result; and, where the
input fails a stage, that the outputs an earlier run wrote are still there, unchanged.
"""
from __future__ import annotations

import contextlib
import csv
import importlib
import io
import logging
import os
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from fake_openai import FakeConfig, FakeOpenAI
from tiny_project import DOCS, make_pdf

ROOT = Path(__file__).resolve().parents[1]
MEMO = "Facilities memo\n\nThe Denver site keeps 4200 liters of diesel for its backup generator.\n\n" \
       "The generator was last tested in March.\n"
SMITH = "Smith, Jones 2024"  # a file name with a comma: its doc id too
WATER = "# Water use\n\n## 1 Cooling\n\nEvaporative cooling uses 700000 liters of freshwater a year.\n\n" \
        "## 2 Power\n\nThe site reported a power usage effectiveness of 1.1.\n"
QUESTIONS = [("q1", "How many liters of diesel does the Denver site keep for its backup generator?", "4200",
              "liters", "['memo']"),
             ("q2", "How many liters of freshwater does evaporative cooling use a year?", "700000", "liters",
              f"['{SMITH}']"),
             ("q3", "What is the peak power draw of the A100 GPU in watts?", "400", "W", "['gpu2024']")]
HEADER = ["id", "question", "answer", "answer_value", "answer_unit", "ref_id", "ref_url", "supporting_materials",
          "explanation"]


def write_questions(path: Path, rows: list[tuple[str, str, str, str, str]], encoding: str = "utf-8") -> None:
    with path.open("w", newline="", encoding=encoding) as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        for qid, q, v, u, r in rows:
            w.writerow([qid, q, v, v, u, r, "is_blank", "is_blank", "is_blank"])


class Project:
    """A tiny project folder; `stage(name)` runs a stage's main here as `python -m stages.<name>` would."""

    def __init__(self, root: Path, url: str, monkeypatch: pytest.MonkeyPatch, template: Path | None = None) -> None:
        self.root, self.url, self.mp = root, url, monkeypatch
        monkeypatch.setenv("TREERAG_CACHE_DIR", str(root / "cache"))
        if template is not None:  # a copy of the built template: every stage's outputs are there
            shutil.copytree(template, root, symlinks=True)
            self.params = yaml.safe_load((root / "params.yaml").read_text())
            monkeypatch.chdir(root)
            return
        corpus = root / "data" / "corpus"
        corpus.mkdir(parents=True)
        (corpus / "memo.txt").write_text(MEMO)
        (corpus / f"{SMITH}.md").write_text(WATER)
        make_pdf(corpus / "gpu2024.pdf", DOCS["gpu2024"])
        with (root / "data" / "metadata.csv").open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "type", "title", "year", "citation", "url"])
            w.writerow(["memo", "memo", "Facilities memo", "2024", "Acme (2024). Memo.", "https://example.org/m"])
            w.writerow([SMITH, "paper", "Water use", "2024", "Smith, Jones (2024). Water.", "https://example.org/w"])
            w.writerow(["gpu2024", "paper", "GPU power", "2024", "Lovelace (2024). GPU.", "https://example.org/g"])
        write_questions(root / "data" / "questions.csv", QUESTIONS)
        params = yaml.safe_load((ROOT / "params.yaml").read_text())
        params["data"] = {"corpus_dir": "data/corpus", "metadata": "data/metadata.csv",
                          "questions": "data/questions.csv"}
        params["llm"].update(base_url=url, model="fake", max_attempts=1, timeout_s=30)
        params["embed"].update(base_url=url, model="fake-embed")
        params["plan"]["n_queries"] = 1
        params["extract"]["workers"] = 1  # no process pool to start for three files
        params["retrieve"]["max_context_tokens"] = 300
        params["answer"].update(demos=[], demo_file="data/questions.csv", max_retries=0, reader="free")  # the fake's replies
        params["ensemble"]["n"] = 1
        self.params = params
        self.write_params()
        monkeypatch.chdir(root)

    def write_params(self, text: str | None = None) -> None:
        (self.root / "params.yaml").write_text(text if text is not None else yaml.safe_dump(self.params))

    def patch(self, key: str, value: Any) -> None:
        """params.yaml with `key` (section.name) set to `value`; `value=DELETE` removes it."""
        sec, _, name = key.partition(".")
        if value is DELETE:
            self.params[sec].pop(name)
        else:
            self.params[sec][name] = value
        self.write_params()

    def stage(self, name: str, *argv: str) -> tuple[int, str]:
        """(exit code, stderr) of `python -m stages.<name> argv...` (in this process)."""
        from stages.core.common.cli import run

        self.mp.setattr(sys, "argv", [f"stages.{name}", *argv])
        mod = importlib.import_module(f"stages.{name}")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            try:
                code = mod.main(list(argv)) if name == "score" else run(mod.main, name)
            except SystemExit as e:
                code = e.code
        return int(code or 0), err.getvalue()

    def build(self, until: str = "answer") -> None:
        """Run the stages up to `until`."""
        for name in STAGES[:STAGES.index(until) + 1]:
            code, err = self.stage(name)
            assert code == 0, f"{name}: {err[-2000:]}"

    def snapshot(self) -> dict[str, bytes]:
        """Every output file now (artifacts/, metrics/, submissions/): what a failed run must leave alone."""
        return {str(p.relative_to(self.root)): p.read_bytes() for d in ("artifacts", "metrics", "submissions")
                for p in sorted((self.root / d).rglob("*")) if p.is_file()}


DELETE = object()
STAGES = ["extract", "caption", "build_tree", "embed", "index", "plan", "retrieve", "answer", "vote", "score"]


@pytest.fixture(scope="module")
def fake():
    with FakeOpenAI(FakeConfig(max_request_chars=20_000)) as f:
        yield f


@pytest.fixture(scope="module")
def template(fake, tmp_path_factory):
    """The tiny project with every stage run once (extract .. score): each test gets a copy."""
    with pytest.MonkeyPatch.context() as mp:
        root = tmp_path_factory.mktemp("template") / "proj"
        Project(root, fake.base_url, mp).build("score")
    return root


@pytest.fixture
def project(fake, template, tmp_path, monkeypatch):
    return Project(tmp_path / "proj", fake.base_url, monkeypatch, template)


def no_server(host: str, port: int, *a: Any, **k: Any) -> Any:
    raise AssertionError(f"serve bound {host}:{port}")  # (and would serve until killed)


def one_line_error(code: int, err: str, *needles: str) -> str:
    """The stage failed with exit 1 and ended on one line holding every needle (no traceback)."""
    assert code != 0, err
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    for n in needles:
        assert n in last, last
    return last


# ------------------------------------------------------------------------------------------- params.yaml
# (stage, params key, value, the error's words): every stage reads params.yaml through one validation
PARAM_ROWS = [
    ("extract", "data.corpus_dir", DELETE, ["missing parameter data.corpus_dir"]),  # row 2: read the whole repo
    ("plan", "data.questions", None, ["data.questions is empty"]),  # row 8: null -> TypeError traceback
    ("plan", "data.questoins", "data/questions.csv", ["unknown parameter(s) data.questoins",
                                                      "did you mean data.questions?"]),  # row 8: misspelt key
    ("embed", "llm.timeout_s", -1, ["llm.timeout_s=-1", "must be"]),  # row 8
    ("retrieve", "retrieve.max_context_tokens", -2, ["retrieve.max_context_tokens=-2 must be a number >= 0"]),
    ("index", "index.ann_min_rows", -100, ["index.ann_min_rows=-100 must be a number >= 0"]),  # row 8: negative
    ("vote", "ensemble.seed", -1, ["ensemble.seed=-1 must be a number >= 0"]),
    ("build_tree", "tree.max_paragraph_chars", float("nan"), ["tree.max_paragraph_chars"]),
]


@pytest.mark.parametrize("stage, key, value, words", PARAM_ROWS, ids=[f"{r[0]}-{r[1]}" for r in PARAM_ROWS])
def test_a_bad_parameter_is_one_line_naming_it(project, stage, key, value, words):
    before = project.snapshot()
    project.patch(key, value)
    one_line_error(*project.stage(stage), f"error in stage {stage}", *words)
    assert project.snapshot() == before  # the outputs of the last good run are still there


@pytest.mark.parametrize("stage", ["extract", "caption", "build_tree", "embed", "index", "plan", "retrieve",
                                   "answer", "vote", "ask", "serve"])
def test_broken_yaml_and_a_misspelt_section_are_errors_in_every_stage(project, stage, monkeypatch):
    import stages.serve

    monkeypatch.setattr(stages.serve, "make_server", no_server)  # a serve that ran on would never return
    text = yaml.safe_dump(project.params)
    project.write_params(text + "retreive:\n  max_context_tokens: 10\n")  # row 8: silently ignored before
    argv = ("q?",) if stage == "ask" else ()
    one_line_error(*project.stage(stage, *argv), "params.yaml: unknown section(s) 'retreive' (did you mean "
                   "'retrieve'?)")
    project.write_params(text + "plan:\n  n_queries: [1\n")  # row 8: yaml.parser traceback before
    one_line_error(*project.stage(stage, *argv), "params.yaml: not valid YAML at line")


def test_the_repository_params_yaml_has_only_known_sections():
    from stages.core.common.params import SECTIONS, load_params

    assert set(load_params(ROOT / "params.yaml")) <= set(SECTIONS)


# ------------------------------------------------------------------------------------------------ extract
def test_a_corpus_with_no_readable_document_fails_at_extract(project):
    """Row 3: extract, build_tree, embed, index 'succeeded' with 0 rows and retrieve crashed (reshape)."""
    before = project.snapshot()
    corpus = project.root / "data" / "corpus"
    for p in corpus.iterdir():
        p.unlink()
    (corpus / "zero.pdf").write_bytes(b"")
    (corpus / "page.pdf").write_text("<html>not a pdf</html>")
    code, err = project.stage("extract")
    one_line_error(code, err, "data/corpus: no readable document: all 2 file(s) were skipped (first:", "page.pdf")
    for p in corpus.iterdir():
        p.unlink()
    one_line_error(*project.stage("extract"), "data/corpus: no document in the corpus folder")
    assert project.snapshot() == before  # the last good extract is still there


def test_a_truncated_pdf_is_read_with_a_warning(project):
    """Row 6: a truncated PDF gave 2 of its 6 lines, marked ok without a word."""
    pdf = project.root / "data" / "corpus" / "gpu2024.pdf"
    pdf.write_bytes(pdf.read_bytes()[: len(pdf.read_bytes()) * 2 // 3])
    code, err = project.stage("extract")
    assert code == 0, err
    assert "gpu2024.pdf: damaged PDF (truncated, or a broken cross-reference table) repaired on reading" in err
    docs = pl.read_parquet(project.root / "artifacts/extract/documents.parquet")
    assert docs.filter(pl.col("doc_id") == "gpu2024")["message"][0].startswith("damaged PDF")


def test_scanned_pdf_and_same_stem_are_skipped_with_a_count(project):
    """Beyond the list: a PDF with no text layer, two files with one stem: skipped, named and counted."""
    import pymupdf

    corpus = project.root / "data" / "corpus"
    scan = pymupdf.open()
    scan.new_page().draw_rect(pymupdf.Rect(50, 50, 300, 300), fill=(0.5, 0.5, 0.5))
    scan.save(str(corpus / "scan.pdf"))
    (corpus / "memo.md").write_text("# Another memo\n\nText.\n")
    code, err = project.stage("extract")
    assert code == 0, err
    assert "scan.pdf: no text layer in 1 page(s)" in err
    assert "memo.txt: duplicate doc_id 'memo'" in err or "memo.md: duplicate doc_id 'memo'" in err
    assert "WARNING extract: 2 of 5 file(s) skipped; 3 document(s) read" in err


# --------------------------------------------------------------------------------- retrieve (whole chain)
def test_short_documents_and_a_comma_in_a_file_name_are_retrieved(project):
    """Row 1: a memo with no heading was all front matter, never retrieved. Row 4: the doc id
    'Smith, Jones 2024' was split at its comma, so its gold-document recall was 0."""
    nodes = pl.read_parquet(project.root / "artifacts/tree/nodes.parquet")
    assert not nodes.filter(pl.col("doc_id") == "memo")["is_front_matter"].any()
    ctx = pl.read_parquet(project.root / "artifacts/retrieve/contexts.parquet").filter(pl.col("attempt") == 0)
    docs = {q: set(g["doc_id"]) for (q,), g in ctx.group_by("question_id")}
    assert "memo" in docs["q1"] and SMITH in docs["q2"]
    import json

    metrics = json.loads((project.root / "metrics/retrieval.json").read_text())
    assert metrics["answerable_questions"] == 3
    recall = {k: v for k, v in metrics.items() if "recall" in k and "doc" in k}
    assert recall and all(v == pytest.approx(1.0) for v in recall.values()), metrics


def test_ref_ids_with_commas_inside_quotes_stay_whole():
    from stages.core.common.values import parse_ref_ids

    assert parse_ref_ids(f"['{SMITH}']") == [SMITH]
    assert parse_ref_ids(f"['{SMITH}', 'gpu2024']") == [SMITH, "gpu2024"]
    assert parse_ref_ids('["a, b";"c"]') == ["a, b", "c"]
    assert parse_ref_ids("['a','b']") == parse_ref_ids("a, b") == parse_ref_ids("[a;b]") == ["a", "b"]


# ------------------------------------------------------------------------------------- plan: the questions
@pytest.mark.parametrize("encoding, outcome", [
    ("cp1252", "line 4 is not UTF-8 (byte 0xea at column 34)"),  # row 6: read as mojibake before
    ("shift_jis", "line 4 is not UTF-8"),
    ("utf-16", None),  # with its byte-order mark: read right
])
def test_a_questions_csv_not_in_utf8_is_named_or_read_right(project, encoding, outcome):
    rows = [*QUESTIONS[:2], ("q3", "Quelle est la puissance de crête du GPU A100, en watts ? (l'énergie)",
                             "400", "W", "['gpu2024']")]
    if encoding == "shift_jis":
        rows[2] = ("q3", "A100 GPUのピーク電力は何ワットですか？", "400", "W", "['gpu2024']")
    write_questions(project.root / "data/questions.csv", rows, encoding)
    code, err = project.stage("plan")
    if outcome is None:
        assert code == 0, err
        queries = pl.read_parquet(project.root / "artifacts/plan/queries.parquet")
        assert queries.filter(pl.col("question_id") == "q3")["query"][0] == rows[2][1]
    else:
        one_line_error(code, err, "data/questions.csv: " + outcome, "save the file as UTF-8")


# ------------------------------------------------------------------------------- answer: one bad question
def test_a_question_too_long_for_the_model_is_recorded_and_the_rest_answered(project, caplog):
    """Row 7: a 100 KB question failed the whole answer stage after the model had loaded."""
    rows = [*QUESTIONS, ("q4", "How much diesel? " + "very " * 20_000, "is_blank", "is_blank", "is_blank")]
    write_questions(project.root / "data/questions.csv", rows)
    with caplog.at_level(logging.WARNING):
        for stage in ("plan", "retrieve", "answer", "vote"):
            assert project.stage(stage)[0] == 0
    member = pl.read_parquet(project.root / "artifacts/answers/run_0.parquet")
    assert member["question_id"].to_list() == ["q1", "q2", "q3", "q4"]
    long = member.row(3, named=True)
    assert long["is_blank"] and long["explanation"].startswith("failed: ") and "exceeds the available context" \
        in long["explanation"]
    assert not member.filter(pl.col("question_id") != "q4")["is_blank"].any()  # the others were answered
    assert "answer: 1 of 4 question(s) could not be answered" in caplog.text
    sub = pl.read_csv(project.root / "submissions/submission.csv", infer_schema=False)
    assert sub["id"].to_list() == ["q1", "q2", "q3", "q4"] and sub["answer_value"][3] == "is_blank"


# ------------------------------------------------------------------------------------------------ score
def _submission(project: Project, ids: list[str]) -> Path:
    sub = pl.read_csv(project.root / "submissions/submission.csv", infer_schema=False)
    path = project.root / "other.csv"
    sub.with_columns(pl.Series("id", ids)).write_csv(path)
    return path


@pytest.mark.parametrize("ids, code, message", [
    (["Q1", "Q2", "Q3"], 2, "none of its 3 id(s) is a question id of data/questions.csv"),  # row 5: 0.1, exit 0
    (["q1", "q2", "x9"], 0, "has no row for 1 of 3 question(s) of data/questions.csv (scored as blank answers): q3"),
    (["q1", "q2", "x9"], 0, "has 1 row(s) whose id is no question of data/questions.csv (ignored): x9"),
])
def test_score_names_a_submission_for_other_questions(project, caplog, ids, code, message):
    before = project.snapshot()
    sub = _submission(project, ids)
    with caplog.at_level(logging.WARNING):
        got, err = project.stage("score", "--labels", "data/questions.csv", "--submission", str(sub))
    assert got == code, err
    assert message in (err if code else caplog.text)
    assert project.snapshot() == before


def test_the_score_stage_reads_data_questions_through_the_shared_validation(project):
    before = project.snapshot()
    project.patch("data.questions", None)
    code, err = project.stage("score")
    assert code == 2 and err.strip().splitlines()[-1] == "score: params.yaml: data.questions is empty; name the " \
        "file or folder"
    assert project.snapshot() == before


# ------------------------------------------------------------------------------------------- ask, serve
def test_ask_with_bad_params_or_a_missing_index_is_one_line(project):
    project.patch("data.metadata", None)
    one_line_error(*project.stage("ask", "What?"), "error in stage ask: params.yaml: data.metadata is empty")
    project.patch("data.metadata", "data/metadata.csv")
    shutil.rmtree(project.root / "artifacts/tree")
    one_line_error(*project.stage("ask", "What?"), "artifacts/tree/nodes.parquet: artifact not found")


def test_serve_refuses_a_port_out_of_range(project, monkeypatch):
    """Row 9: --port 99999 bound another port without a word."""
    import stages.serve

    monkeypatch.setattr(stages.serve, "make_server", no_server)
    code, err = project.stage("serve", "--port", "99999")
    assert code == 2 and "argument --port: 99999 is not a port: use 1..65535 (0: a free one)" in err


def test_the_ask_page_runs_only_its_own_forms_question(monkeypatch):
    """Row 9: GET /ask?question=... (a link or <img> on any site) ran the pipeline in the user's browser."""
    from test_report import _service

    from stages.core.tools import serve

    client = _service(monkeypatch)
    asked: list[str] = []
    real = serve.ask_question

    def counting(question: str, *a: Any, **k: Any) -> Any:
        asked.append(question)
        return real(question, *a, **k)

    monkeypatch.setattr(serve, "ask_question", counting)
    assert client.get("/ask?question=How+much%3F").status_code == 405
    for headers in ({"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"},
                    {"Sec-Fetch-Site": "same-site", "Origin": "http://other.localhost"}):
        r = client.post("/ask", data={"question": "How much?"}, headers=headers)
        assert r.status_code == 403 and "questions are taken only from this page" in r.get_data(as_text=True)
        assert client.post("/api/ask", json={"question": "How much?"}, headers=headers).status_code == 403
    assert asked == []
    own = {"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}
    r = client.post("/ask", data={"question": "How much?", "unit": "MWh"}, headers=own)
    assert r.status_code == 200 and 'id="answer-value">150<' in r.get_data(as_text=True)
    assert client.post("/api/ask", json={"question": "How much?", "unit": "MWh"}).status_code == 200  # curl
    assert asked == ["How much?", "How much?"]


# ------------------------------------------------------------------------------------------ output modes
@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600)])
def test_outputs_get_the_mode_the_umask_gives(tmp_path, umask, mode):
    """Row 10: report.html, metrics and artifacts were 0600 whatever the umask."""
    from stages.core.common.artifacts import write_csv, write_json, write_parquet, write_text

    old = os.umask(umask)
    try:
        writers: list[Callable[[Path], Any]] = [lambda p: write_json({"a": 1}, p), lambda p: write_text("x", p),
                                                lambda p: write_parquet(pl.DataFrame({"a": [1]}), p),
                                                lambda p: write_csv(pl.DataFrame({"a": [1]}), p)]
        for i, w in enumerate(writers):
            w(tmp_path / f"out{i}")
            assert stat.S_IMODE((tmp_path / f"out{i}").stat().st_mode) == mode
    finally:
        os.umask(old)


# ---------------------------------------------------------------------------------------- metadata.csv
def test_metadata_rows_empty_title_empty_id_and_a_duplicate(project, caplog):
    """Beyond the list: an empty title is the document's own title (here its id), a row with no id is
    dropped with a count, and two rows for one id (whichever came last won) are an error."""
    path = project.root / "data/metadata.csv"
    rows = list(csv.reader(path.open()))
    rows[3][2] = ""  # gpu2024: no title
    path.write_text("\n".join(",".join(f'"{c}"' for c in r) for r in [*rows, ["", "memo", "x", "", "", ""]]) + "\n")
    with caplog.at_level(logging.WARNING):
        assert project.stage("extract")[0] == 0 and project.stage("index")[0] == 0
    assert "data/metadata.csv: 1 row(s) with an empty id skipped" in caplog.text
    docs = pl.read_parquet(project.root / "artifacts/extract/documents.parquet")
    assert docs.filter(pl.col("doc_id") == "gpu2024")["title"][0] == "gpu2024"
    before = project.snapshot()
    with path.open("a") as f:
        f.write('"memo","memo","Second memo row","2025","",""\n')
    one_line_error(*project.stage("index"), "data/metadata.csv: duplicate document id(s): memo")
    assert project.snapshot() == before
