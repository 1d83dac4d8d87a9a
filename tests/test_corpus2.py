"""The second corpus (tests/data/corpus2): five real PDFs from Debian's documentation
packages and 22 questions written from them, besides WattBot, to guard treerag's generality.

- the data itself: every gold quote stands on its gold page (and on no other page) of the
  real PDF, refs name documents of the metadata, the mix of question kinds holds;
- end to end: `dvc repro` of a real DVC project on it (neutral `corpus:` params, no WattBot
  demos) with the real embedded LLM server and the 0.5B test model, scored by the project's
  own scorer, with floors on the score, on value accuracy and on gold-document and gold-page
  recall of the context. No mocks.
"""
from __future__ import annotations

import csv
import json
import re
import unicodedata

import polars as pl
import pymupdf
import pytest
from corpus2_project import CORPUS2, gold_recall, make_corpus2_project, read_questions
from tiny_project import dvc

from stages.core.common.dataio import read_csv_tolerant
from stages.core.common.values import is_blank, parse_number, ref_id_set
from stages.core.score.metric import score_question
from stages.core.score.verdicts import score_submission

QUESTIONS = read_questions()
# Floors of the end-to-end run with the 0.5B test model, each with margin below what it measured
# (official score 0.656, 10 of 19 answerable right, gold-doc recall 1.0, gold-page recall 0.947 at
# retrieve.max_context_tokens=500; bench/corpus2.py has the 1.5B's numbers). Blank answers everywhere
# score 0.223 and wrong answers citing nothing 0.209 (test_floors_reject_blank_and_wrong_answers);
# contexts of random units (the same sizes, 20 draws) hold the gold document for 0.69 of the
# questions (at most 0.84) and the gold page for 0.11 (at most 0.32).
SCORE_FLOOR = 0.45
RIGHT_FLOOR = 6
DOC_RECALL_FLOOR = 0.90
PAGE_RECALL_FLOOR = 0.60


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", s)).strip().lower()


def _metadata() -> dict[str, dict[str, str]]:
    with (CORPUS2 / "metadata.csv").open(newline="") as f:
        return {r["id"]: r for r in csv.DictReader(f)}


def test_corpus_files_match_metadata_and_stay_small():
    pdfs = sorted((CORPUS2 / "corpus").iterdir())
    assert [p.suffix for p in pdfs] == [".pdf"] * len(pdfs) and 3 <= len(pdfs) <= 6
    assert {p.stem for p in pdfs} == set(_metadata())
    assert sum(p.stat().st_size for p in pdfs) <= 3 * 1024 * 1024
    for row in _metadata().values():
        assert row["title"].strip() and row["year"].isdigit() and row["url"].startswith("https://"), row


def test_questions_are_well_formed_and_mixed():
    cols = ["id", "question", "answer", "answer_value", "answer_unit", "ref_id", "ref_url", "supporting_materials",
            "explanation", "gold_page"]
    with (CORPUS2 / "questions.csv").open(newline="") as f:
        assert next(csv.reader(f)) == cols
    assert 18 <= len(QUESTIONS) <= 30
    assert len({q["id"] for q in QUESTIONS}) == len(QUESTIONS)
    meta = _metadata()
    blank = [q for q in QUESTIONS if is_blank(q["answer_value"])]
    assert len(blank) >= 3
    for q in blank:  # unanswerable: nothing to cite
        assert is_blank(q["ref_id"]) and is_blank(q["gold_page"]), q["id"]
    answerable = [q for q in QUESTIONS if not is_blank(q["answer_value"])]
    tf = [q for q in answerable if q["question"].lower().startswith("true or false")]
    numeric = [q for q in answerable if q not in tf and parse_number(q["answer_value"]) is not None]
    names = [q for q in answerable if q not in tf and q not in numeric]
    assert len(tf) >= 3 and len(numeric) >= 6 and len(names) >= 4, (len(tf), len(numeric), len(names))
    assert all(q["answer_value"] in ("0", "1") for q in tf)
    for q in answerable:
        refs = ref_id_set(q["ref_id"])
        assert refs and refs <= set(meta), q["id"]
        assert int(q["gold_page"]) >= 1


@pytest.mark.parametrize("q", [q for q in QUESTIONS if not is_blank(q["answer_value"])], ids=lambda q: q["id"])
def test_gold_quote_stands_on_gold_page_only(q):
    """The supporting quote is on the gold page of the real PDF, as PyMuPDF reads it, and on no other page."""
    (doc_id,) = ref_id_set(q["ref_id"])
    doc = pymupdf.open(CORPUS2 / "corpus" / f"{doc_id}.pdf")
    quote = _norm(q["supporting_materials"])
    pages = [i + 1 for i, page in enumerate(doc) if quote in _norm(page.get_text())]
    assert pages == [int(q["gold_page"])], (q["id"], pages)


def _submission(value: str, ref: str) -> pl.DataFrame:
    return pl.DataFrame([{"id": q["id"], "question": q["question"], "answer": value, "answer_value": value,
                          "answer_unit": q["answer_unit"], "ref_id": ref, "ref_url": "is_blank",
                          "supporting_materials": "is_blank", "explanation": "is_blank"} for q in QUESTIONS])


def test_floors_reject_blank_and_wrong_answers():
    """The project's scorer reads the gold file (gold against itself scores 1), and a reader that
    abstains everywhere, or answers everything wrongly, stays below the end-to-end floor."""
    labels = read_csv_tolerant(CORPUS2 / "questions.csv")
    perfect, _ = score_submission(labels, labels)
    assert perfect["score"] == pytest.approx(1.0)
    blank, _ = score_submission(labels, _submission("is_blank", "is_blank"))
    wrong, _ = score_submission(labels, _submission("zzz", "is_blank"))
    assert blank["score"] < SCORE_FLOOR - 0.15 and wrong["score"] < SCORE_FLOOR - 0.15, (blank, wrong)


@pytest.mark.llm
def test_dvc_repro_on_second_corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "cache"))
    proj = make_corpus2_project(tmp_path, model="qwen2.5-coder-0.5b", overrides={
        "llm": {"n_ctx": 4096},
        "retrieve": {"max_context_tokens": 500},
        "answer": {"max_retries": 1},
    })
    dvc(proj, "init", "--no-scm", "-q")
    dvc(proj, "repro")

    with (proj / "submissions" / "submission.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["id"] for r in rows] == [q["id"] for q in QUESTIONS]
    score = json.loads((proj / "metrics" / "score.json").read_text())
    assert score["n"] == len(QUESTIONS)
    # answers right in value on the answerable questions (the blank ones score value 1 whatever is said)
    truth = {q["id"]: q for q in QUESTIONS}
    right = [r["id"] for r in rows if not is_blank(truth[r["id"]]["answer_value"])
             and score_question(truth[r["id"]], r).value == 1.0]
    retrieval = json.loads((proj / "metrics" / "retrieval.json").read_text())
    recall = gold_recall(proj)
    summary = {"score": score["score"], "right": right, "retrieval": retrieval,
               "page_recall": recall["gold_page_recall"]}
    assert retrieval["gold_doc_recall"] >= DOC_RECALL_FLOOR, summary
    assert recall["gold_doc_recall"] == pytest.approx(retrieval["gold_doc_recall"], abs=1e-3), summary
    assert recall["gold_page_recall"] >= PAGE_RECALL_FLOOR, summary
    assert len(right) >= RIGHT_FLOOR, summary
    assert score["score"] >= SCORE_FLOOR, summary
