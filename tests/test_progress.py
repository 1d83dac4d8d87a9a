"""Long loops say stage and unit in their progress bars; extract's bar also counts the pages read."""
from __future__ import annotations

from pathlib import Path

import pytest
from test_pdf_extract import make_pdf

from stages.core.extract.loaders import ExtractParams, extract_corpus, find_corpus_files, load_one
from stages.core.extract.workers import LoadJob, load_all


def _corpus(tmp_path: Path, n: int) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(n):
        make_pdf(corpus / f"paper{i}.pdf")  # two pages each
    return corpus


@pytest.mark.parametrize("workers", [1, 2])
def test_on_done_gets_every_outcome(tmp_path, workers):
    corpus = _corpus(tmp_path, 3)
    jobs = [LoadJob(p, p.stem, "pdf") for p in find_corpus_files(corpus)]
    seen = []
    outcomes = load_all(load_one, jobs, ExtractParams(), None, workers, seen.append)
    assert len(seen) == 3
    assert sum(o.loaded.n_pages for o in seen) == 6
    assert [o.loaded.n_pages for o in outcomes] == [2, 2, 2]


def test_extract_bar_names_stage_unit_and_pages(tmp_path, capsys):
    corpus = _corpus(tmp_path, 2)
    (tmp_path / "images").mkdir()
    extract_corpus(corpus, ExtractParams(workers=1), tmp_path / "images", progress=True)
    err = capsys.readouterr().err
    assert "extract: files (text, tables, images)" in err
    assert "2/2" in err and "file" in err
    assert "pages=4" in err  # the postfix after the last file: 2 files x 2 pages
