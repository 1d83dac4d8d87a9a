"""bench/sample_table_cells.py: captions found in raw corpus text, draws reproducible and disjoint."""
from __future__ import annotations

import json

from bench.sample_table_cells import asked_tables, captions, main


def _corpus(tmp_path):
    docs = {
        "a2024": "Intro.\nTable 1: Energy per model.\nBERT 12 13\nTable 1 shows the energy.\nTABLE IV\nSpecs\nx 1 2\n",
        "b2025": "T able B2 Comparison of nodes.\nLlama 1.0 2.0\nTable 3. Costs\nGPT 4 5\n",
    }
    for doc, text in docs.items():
        (tmp_path / f"{doc}.json").write_text(json.dumps({"document_id": doc, "text": text}), encoding="utf-8")
    return tmp_path


def test_captions_are_caption_lines_once_per_table(tmp_path):
    found = [(d, n) for d, n, _ in captions(_corpus(tmp_path))]
    assert found == [("a2024", "1"), ("a2024", "IV"), ("b2025", "B2"), ("b2025", "3")]  # "Table 1 shows" is no caption


def test_draws_repeat_with_their_seeds_and_a_second_draw_skips_the_first(tmp_path, capsys):
    corpus = str(_corpus(tmp_path))
    main(["--corpus", corpus, "--n", "2", "--seed", "1", "--cell-seed", "7"])
    first = capsys.readouterr().out
    main(["--corpus", corpus, "--n", "2", "--seed", "1", "--cell-seed", "7"])
    assert capsys.readouterr().out == first
    main(["--corpus", corpus, "--n", "2", "--seed", "5", "--skip-seed", "1"])
    second = capsys.readouterr().out
    heads = lambda out: {(line.split()[2], line.split()[4]) for line in out.splitlines() if line.startswith("####")}
    assert len(heads(first)) == 2 and len(heads(second)) == 2 and not heads(first) & heads(second)
    assert main(["--corpus", corpus, "--n", "3", "--skip-seed", "1"]) == 2  # only 2 tables left


def test_a_new_draw_skips_the_tables_a_labelled_file_asks_about(tmp_path, capsys):
    (tmp_path / "c").mkdir()
    corpus = _corpus(tmp_path / "c")
    asked = tmp_path / "asked.csv"
    asked.write_text("id,ref_id,explanation\nh1,['a2024'],Table 1\nh2,['b2025'],Table B2\nh3,['b2025'],Quote\n",
                     encoding="utf-8")
    assert asked_tables(asked) == {("a2024", "1"), ("b2025", "B2")}
    main(["--corpus", str(corpus), "--n", "2", "--skip-questions", str(asked)])
    heads = {(line.split()[2], line.split()[4]) for line in capsys.readouterr().out.splitlines() if line.startswith("####")}
    assert heads == {("a2024", "IV"), ("b2025", "3")}
