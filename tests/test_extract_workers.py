"""extract in worker processes: the same artifacts and warnings as one worker, a file that
kills its worker skips only itself, and drawing-heavy pages skip the (costly) table search."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pymupdf
from extract_helpers import crash_on_name
from test_pdf_extract import _bad_corpus, make_pdf

from stages.core.extract.loaders import (
    ExtractParams,
    extract_corpus,
    find_corpus_files,
    load_one,
    to_frames,
)
from stages.core.extract.pdf import extract_pdf
from stages.core.extract.workers import LoadJob, load_all


def _corpus(tmp_path: Path) -> Path:
    corpus = _bad_corpus(tmp_path)
    for i in range(3):
        make_pdf(corpus / f"paper{i}.pdf")
    # two files claim doc_id "dup": the first is broken, so the second is read; a third is a duplicate
    (corpus / "a_dup.json").write_text('{"document_id": "dup", "sections": 5}')
    (corpus / "b_dup.json").write_text(json.dumps({"document_id": "dup", "title": "Dup", "sections": [
        {"metadata": {"page": 1}, "paragraphs": [{"text": "Second file with the id dup."}]}]}))
    (corpus / "z").mkdir()
    (corpus / "z" / "dup.md").write_text("# dup\n\nA third file named dup.\n")
    return corpus


def _extract(corpus: Path, out: Path, workers: int, capsys) -> tuple[list[pl.DataFrame], dict[str, bytes], str]:
    shutil.rmtree(out, ignore_errors=True)  # as the stage does
    frames = to_frames(extract_corpus(corpus, ExtractParams(workers=workers), out, progress=False))
    pngs = {p.name: p.read_bytes() for p in sorted(out.iterdir())}
    return list(frames), pngs, capsys.readouterr().err


def test_two_workers_give_the_same_artifacts_and_warnings_as_one(tmp_path, capsys):
    corpus = _corpus(tmp_path)
    one, png1, err1 = _extract(corpus, tmp_path / "img", 1, capsys)
    two, png2, err2 = _extract(corpus, tmp_path / "img", 2, capsys)
    for a, b in zip(one, two, strict=True):
        assert a.equals(b)
    assert png1 == png2 and len(png1) == 4  # good + paper0..2, same bytes
    assert err1 == err2 and "skipped" in err1
    docs = one[0]
    dup = docs.filter(pl.col("doc_id") == "dup").select("source", "status").rows()
    assert [(Path(s).name, st) for s, st in dup] == [("a_dup.json", "skipped"), ("b_dup.json", "ok"),
                                                     ("dup.md", "skipped")]
    assert "duplicate doc_id 'dup' (already read from" in docs.filter(pl.col("source").str.ends_with("dup.md"))[
        "message"][0]


def test_a_file_that_kills_its_worker_only_skips_itself(tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    for i in range(5):
        make_pdf(corpus / f"p{i}.pdf")
    (corpus / "crash.pdf").write_bytes((corpus / "p0.pdf").read_bytes())
    files = find_corpus_files(corpus)
    jobs = [LoadJob(p, p.stem, "pdf") for p in files]
    outcomes = load_all(crash_on_name, jobs, ExtractParams(), None, workers=2)
    by_name = {j.path.name: o for j, o in zip(jobs, outcomes, strict=True)}
    assert by_name["crash.pdf"].loaded is None and "worker process died" in by_name["crash.pdf"].error
    assert all(o.loaded is not None and o.error is None for n, o in by_name.items() if n != "crash.pdf")
    expected = load_one(files[1], files[1].stem, "pdf", ExtractParams(), None)
    assert by_name[files[1].name].loaded == expected


def _table_page_with_drawings(path: Path, n_drawings: int) -> None:
    make_pdf(path)
    doc = pymupdf.open(str(path))
    page = doc[0]
    for k in range(n_drawings):  # a diagram of many small separate paths below the table
        x, y = 80 + (k * 7) % 400, 600 + (k * 3) % 150
        page.draw_bezier((x, y), (x + 2, y - 4), (x + 6, y + 4), (x + 8, y), width=0.3)
    doc.save(str(path.with_suffix(".tmp.pdf")))
    path.with_suffix(".tmp.pdf").replace(path)


def test_drawing_heavy_pages_skip_the_table_search_and_say_so(tmp_path, monkeypatch):
    from stages.core.extract import pdf as pdf_mod

    pdf = tmp_path / "manual.pdf"
    _table_page_with_drawings(pdf, 300)
    default = extract_pdf(pdf, "m", None)  # 300 paths: under the limit, the table is found
    assert [b.text.splitlines()[0] for b in default.blocks if b.kind == "table"] == ["| Model | Size (GB) |"]
    assert "no table search" not in default.message
    monkeypatch.setattr(pdf_mod, "TABLE_MAX_DRAWINGS", 100)
    bounded = extract_pdf(pdf, "m", None)
    assert not [b for b in bounded.blocks if b.kind == "table"]
    assert "no table search on 1 page(s) with more than 100 vector drawings: pages 1" in bounded.message
