"""Tree building from flat text (the WattBot JSON format), heading and reference rules, stats."""
from __future__ import annotations

import json
import statistics
from pathlib import Path

import polars as pl
import pytest

from stages.core.extract.loaders import ExtractParams, extract_corpus, to_frames
from stages.core.tree.build import (
    TreeParams,
    build_tree,
    chunk_sentences,
    clean_line,
    doc_inputs,
    join_lines,
    nodes_frame,
    table_row_sentences,
    tree_stats,
)
from stages.core.tree.headings import _Cand, _numbered_candidate, numbered_chain

CORPUS = Path(__file__).resolve().parents[1] / "data" / "wattbot" / "corpus"


def spaced(text: str) -> str:
    """The WattBot JSON style: three spaces between words, trailing spaces on lines."""
    return "\n".join("   ".join(line.split(" ")) + "   " for line in text.split("\n"))


def wattbot_doc() -> dict:
    page1 = [
        "A Study of Energy\nJane Doe, Example University\njane@example.org",
        "Abstract\nWe measure energy. It matters for the planet and for costs of every kind.\n1 Introduction\n"
        "Large models use a lot of energy in training and in infer-\n"
        "ence, as prior work showed for many different systems [1].\n"
        "It is a short last line.\n"
        "A new paragraph starts after the short line and it runs on for a",
        "1",
    ]
    page2 = [
        "while until it ends.\n2 Method\n2.1 Setup\n"
        "We used 8 GPUs for 1,287 MWh in total (see Sec. 4.2 and Fig. 3).\n"
        "Table 1: Results of the runs.\n3 Results\nThe results are good.\nReferences\n"
        "[1] A. Author, Title of paper, 2023.\n[2] B. Author, Another title,\n2024.",
    ]
    image = {"text": "[Image page=1 idx=1 name=X1.png] Size: 300x200, Data: 1000 bytes",
             "metadata": {"page": 1, "image_index": 1, "image_width": 300, "image_height": 200,
                          "attachment_type": "image", "has_image_data": True}}
    deco = {"text": "[Image page=1 idx=2 name=~0~.png] Size: 1x1, Data: 67 bytes",
            "metadata": {"page": 1, "image_index": 2, "image_width": 1, "image_height": 1,
                         "attachment_type": "image", "has_image_data": True}}

    def para(t: str, page: int) -> dict:
        return {"text": spaced(t), "metadata": {"page": page}, "sentences": []}

    return {
        "document_id": "doe2024", "title": "A Study of Energy", "text": "...",
        "metadata": {"url": "https://example.org/doe.pdf", "type": "paper", "year": "2024"},
        "sections": [
            {"title": "Page 1", "metadata": {"page": 1}, "paragraphs": [para(page1[0], 1), para(page1[1], 1), image,
                                                                     deco, para(page1[2], 1)]},
            {"title": "Page 2", "metadata": {"page": 2}, "paragraphs": [para(page2[0], 2)]},
        ],
    }


# (node_id, level, text, page, page_end, title, is_reference, is_front_matter)
EXPECTED = [
    ("doe2024", "document", "A Study of Energy", 1, 2, "A Study of Energy", False, False),
    ("doe2024:sec0", "section", "A Study of Energy\n\nJane Doe, Example University jane@example.org",
     1, 1, None, False, True),
    ("doe2024:sec0:p0", "paragraph", "A Study of Energy", 1, 1, None, False, True),
    ("doe2024:sec0:p0:s0", "sentence", "A Study of Energy", 1, 1, None, False, True),
    ("doe2024:sec0:p1", "paragraph", "Jane Doe, Example University jane@example.org", 1, 1, None, False, True),
    ("doe2024:sec0:p1:s0", "sentence", "Jane Doe, Example University jane@example.org", 1, 1, None, False, True),
    ("doe2024:sec1", "section", "We measure energy. It matters for the planet and for costs of every kind.",
     1, 1, "Abstract", False, False),
    ("doe2024:sec1:p0", "paragraph", "We measure energy. It matters for the planet and for costs of every kind.",
     1, 1, None, False, False),
    ("doe2024:sec1:p0:s0", "sentence", "We measure energy.", 1, 1, None, False, False),
    ("doe2024:sec1:p0:s1", "sentence", "It matters for the planet and for costs of every kind.", 1, 1, None, False, False),
    ("doe2024:sec2", "section",
     "Large models use a lot of energy in training and in inference, as prior work showed for many different "
     "systems [1]. It is a short last line.\n\nA new paragraph starts after the short line and it runs on for a "
     "while until it ends.", 1, 2, "1 Introduction", False, False),
    ("doe2024:sec2:p0", "paragraph",
     "Large models use a lot of energy in training and in inference, as prior work showed for many different "
     "systems [1]. It is a short last line.", 1, 1, None, False, False),
    ("doe2024:sec2:p0:s0", "sentence",
     "Large models use a lot of energy in training and in inference, as prior work showed for many different "
     "systems [1].", 1, 1, None, False, False),
    ("doe2024:sec2:p0:s1", "sentence", "It is a short last line.", 1, 1, None, False, False),
    ("doe2024:sec2:p1", "paragraph",
     "A new paragraph starts after the short line and it runs on for a while until it ends.",
     1, 2, None, False, False),
    ("doe2024:sec2:p1:s0", "sentence",
     "A new paragraph starts after the short line and it runs on for a while until it ends.",
     1, 2, None, False, False),
    ("doe2024:sec3", "section", "", 2, 2, "2 Method", False, False),
    ("doe2024:sec4", "section",
     "We used 8 GPUs for 1,287 MWh in total (see Sec. 4.2 and Fig. 3).\n\nTable 1: Results of the runs.",
     2, 2, "2.1 Setup", False, False),
    ("doe2024:sec4:p0", "paragraph", "We used 8 GPUs for 1,287 MWh in total (see Sec. 4.2 and Fig. 3).",
     2, 2, None, False, False),
    ("doe2024:sec4:p0:s0", "sentence", "We used 8 GPUs for 1,287 MWh in total (see Sec. 4.2 and Fig. 3).",
     2, 2, None, False, False),
    ("doe2024:sec4:p1", "paragraph", "Table 1: Results of the runs.", 2, 2, None, False, False),
    ("doe2024:sec4:p1:s0", "sentence", "Table 1: Results of the runs.", 2, 2, None, False, False),
    ("doe2024:sec5", "section", "The results are good.", 2, 2, "3 Results", False, False),
    ("doe2024:sec5:p0", "paragraph", "The results are good.", 2, 2, None, False, False),
    ("doe2024:sec5:p0:s0", "sentence", "The results are good.", 2, 2, None, False, False),
    ("doe2024:sec6", "section",
     "[1] A. Author, Title of paper, 2023.\n\n[2] B. Author, Another title, 2024.", 2, 2, "References", True, False),
    ("doe2024:sec6:p0", "paragraph", "[1] A. Author, Title of paper, 2023.", 2, 2, None, True, False),
    ("doe2024:sec6:p0:s0", "sentence", "[1] A. Author, Title of paper, 2023.", 2, 2, None, True, False),
    ("doe2024:sec6:p1", "paragraph", "[2] B. Author, Another title, 2024.", 2, 2, None, True, False),
    ("doe2024:sec6:p1:s0", "sentence", "[2] B. Author, Another title, 2024.", 2, 2, None, True, False),
]


@pytest.fixture()
def json_tree(tmp_path: Path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "doe.json").write_text(json.dumps(wattbot_doc()))
    documents, blocks, images = to_frames(extract_corpus(corpus, ExtractParams(), None, progress=False))
    nodes = nodes_frame(build_tree(doc_inputs(documents, blocks, images, None), TreeParams(), progress=False))
    return documents, blocks, images, nodes


def test_wattbot_json_becomes_exact_tree(json_tree):
    documents, _, images, nodes = json_tree
    got = [(r["node_id"], r["level"], r["text"], r["page"], r["page_end"], r["title"], r["is_reference"],
            r["is_front_matter"]) for r in nodes.iter_rows(named=True)]
    assert got == EXPECTED
    assert nodes["attachment_type"].null_count() == nodes.height  # placeholders never become nodes
    doc = documents.row(0, named=True)
    assert (doc["doc_id"], doc["format"], doc["url"], doc["year"], doc["n_pages"]) == (
        "doe2024", "json", "https://example.org/doe.pdf", 2024, 2)
    # the 1x1 placeholder is a decoration; the 300x200 one is kept as an image without pixels
    assert images.select("image_id", "page", "path", "has_pixels").rows() == [("doe2024:p1:img1", 1, None, False)]


def test_stats_count_placeholders_and_numbered_sections(json_tree):
    _, _, images, nodes = json_tree
    stats = tree_stats(nodes, images, None)
    assert stats == {
        "documents": 1, "sections": 7, "paragraphs": 10, "sentences": 12, "images_total": 1,
        "images_captioned": 0, "images_placeholder_skipped": 1, "image_paragraphs": 0, "tables": 0,
        "paragraph_chars_p50": 36, "paragraph_chars_p95": 140, "paragraph_chars_max": 140,
        "docs_with_numbered_sections": 1, "reference_paragraphs": 2, "front_matter_paragraphs": 2,
    }


def test_metadata_csv_overrides_file_metadata(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "doe.json").write_text(json.dumps(wattbot_doc()))
    meta = tmp_path / "metadata.csv"
    meta.write_bytes("id,type,title,year,citation,url\ndoe2024,paper,Caf\xe9 Energy,2023,x,https://m.org\n"
                     .encode("latin-1"))
    documents, _, _ = to_frames(extract_corpus(corpus, ExtractParams(), None, metadata_path=meta, progress=False))
    assert documents.select("title", "year", "url").row(0) == ("Café Energy", 2023, "https://m.org")


def test_clean_line_and_dehyphenation():
    assert clean_line("Carbon   Emissions\xa0\xa0and   ﬁnance  ( CO 2 e ) .") == "Carbon Emissions and finance (CO 2 e)."
    text, marks = join_lines([("We intro-", 1), ("duce a model.", 1), ("Carbon-", 2), ("Free energy.", 2)])
    assert text == "We introduce a model. Carbon-Free energy."
    assert marks == [(0, 1), (8, 1), (22, 2), (29, 2)]


def _cands(lines: list[str]) -> list[_Cand]:
    out = []
    for i, t in enumerate(lines):
        c = _numbered_candidate(t, 100, roman_doc=False)
        if c is not None:
            c.idx = i
            out.append(c)
    return out


def test_numbered_chain_ignores_footnotes_lists_and_contents():
    lines = ["1 Google", "1.Introduction", "2.Energy of Models", "2.1 Setup", "7 Their search found a model",
             "2.2 Results", "3 Related Work", "A Proofs", "A.1 Lemma", "B Extra Tables"]
    assert [c.title for c in numbered_chain(_cands(lines))] == [
        "1 Introduction", "2 Energy of Models", "2.1 Setup", "2.2 Results", "3 Related Work",
        "A Proofs", "A.1 Lemma", "B Extra Tables"]
    # a sentence never is a heading, nor a table row
    assert _numbered_candidate("1 We must assess CO2e correctly. It is hard.", 100, False) is None
    assert _numbered_candidate("4 GPUs 12.5 30.1 44%", 100, False) is None


def test_roman_small_caps_headings_and_ieee_subsections(tmp_path):
    text = ("Abstract\nWe study power.\nI. I NTRODUCTION\nPower matters a lot for everyone.\nA. Background\n"
            "Some background text here.\nII. R ELATED WORK\nOthers studied it too.\nTABLE I\n"
            "COMMON CARBON METRICS\nValues follow.\nIII. C ASE STUDY: DEPLOYMENT OF LARGE\nLANGUAGE MODELS\n"
            "We deploy.\nREFERENCES\n[1] X. Y, A paper, 2020.")
    doc = {"document_id": "ieee", "title": "Power", "sections": [
        {"title": "Page 1", "metadata": {"page": 1}, "paragraphs": [{"text": text, "metadata": {"page": 1}}]}]}
    (tmp_path / "ieee.json").write_text(json.dumps(doc))
    documents, blocks, images = to_frames(extract_corpus(tmp_path, ExtractParams(), None, progress=False))
    nodes = nodes_frame(build_tree(doc_inputs(documents, blocks, images, None), TreeParams(), progress=False))
    assert nodes.filter(pl.col("level") == "section")["title"].to_list() == [
        "Abstract", "I. INTRODUCTION", "A. Background", "II. RELATED WORK",
        "III. CASE STUDY: DEPLOYMENT OF LARGE LANGUAGE MODELS", "REFERENCES"]
    refs = nodes.filter(pl.col("node_id").str.starts_with("ieee:sec5"))
    assert refs["is_reference"].all()


def test_long_paragraphs_split_on_sentences():
    sents = [(f"Sentence number {i} says something about energy use.", 1, 1) for i in range(60)]
    chunks = chunk_sentences(sents, 1500)
    sizes = [sum(len(s[0]) + 1 for s in c) for c in chunks]
    assert len(chunks) == 3 and max(sizes) <= 1500 and min(sizes) > 900
    assert [s for c in chunks for s in c] == sents


def test_table_rows_render_with_headers():
    md = "| Model | Size (GB) |\n| --- | --- |\n| LLaMA-33B | 64.7 |\n| a \\| b |  |"
    assert table_row_sentences(md) == ["Model: LLaMA-33B | Size (GB): 64.7", "Model: a | b"]


def test_bibliography_entries_outside_a_references_section_are_marked(tmp_path):
    text = ("1 Introduction\nText about energy that goes on.\n2 Notes\n"
            "[105] A. Author, Some title of a paper, 2023.\n[106] B. Author, Another title, 2024.\n"
            "3 Conclusion\nNormal closing sentence [105].")
    doc = {"document_id": "r", "title": "R", "sections": [
        {"title": "Page 1", "metadata": {"page": 1}, "paragraphs": [{"text": text, "metadata": {"page": 1}}]}]}
    (tmp_path / "r.json").write_text(json.dumps(doc))
    documents, blocks, images = to_frames(extract_corpus(tmp_path, ExtractParams(), None, progress=False))
    nodes = nodes_frame(build_tree(doc_inputs(documents, blocks, images, None), TreeParams(), progress=False))
    paras = nodes.filter(pl.col("level") == "paragraph")
    assert paras.select("text", "is_reference").rows() == [
        ("Text about energy that goes on.", False),
        ("[105] A. Author, Some title of a paper, 2023.", True),
        ("[106] B. Author, Another title, 2024.", True),
        ("Normal closing sentence [105].", False),
    ]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="WattBot corpus not present")
def test_wattbot_corpus_targets():
    """Acceptance: real sections and small paragraphs on the WattBot corpus."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        documents, blocks, images = to_frames(extract_corpus(CORPUS, ExtractParams(), Path(tmp), progress=False))
    nodes = nodes_frame(build_tree(doc_inputs(documents, blocks, images, None), TreeParams(), progress=False))
    lens = [len(t) for t in nodes.filter(pl.col("level") == "paragraph")["text"].to_list()]
    stats = tree_stats(nodes, images, None)
    assert stats["documents"] == 32
    assert statistics.median(lens) <= 1200
    assert stats["paragraph_chars_p95"] <= 3000
    assert stats["docs_with_numbered_sections"] >= 25
    titles = set(nodes.filter((pl.col("doc_id") == "strubell2019") & (pl.col("level") == "section"))["title"])
    assert {"1 Introduction", "2 Methods", "2.1 Models", "3 Related work", "References"} <= titles
