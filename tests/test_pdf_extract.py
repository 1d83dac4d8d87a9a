"""PDF extraction, bad-file handling and captioning, on PDFs generated here with PyMuPDF."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import polars as pl
import pymupdf
import pytest

from stages.core.caption.describe import (
    CaptionParams,
    VisionParams,
    caption_images,
    vision_describer,
    vision_llm_params,
)
from stages.core.extract.loaders import (
    ExtractError,
    ExtractParams,
    extract_corpus,
    to_frames,
)
from stages.core.llm.params import LLMParams
from stages.core.llm.session import llm_session
from stages.core.tree.build import (
    TreeParams,
    build_tree,
    doc_inputs,
    nodes_frame,
    tree_stats,
)

TITLE = "Energy Use of Small Language Models"


def alpha_png(w: int = 120, h: int = 80) -> bytes:
    """Left half opaque red, right half fully transparent."""
    buf = bytearray()
    for _y in range(h):
        for x in range(w):
            buf += bytes((200, 30, 30, 255)) if x < w // 2 else bytes((0, 0, 255, 0))
    return pymupdf.Pixmap(pymupdf.csRGB, w, h, bytes(buf), True).tobytes("png")


def make_pdf(path: Path) -> Path:
    """Two pages: title, authors, three numbered sections, an RGBA image, a ruled table, references."""
    doc = pymupdf.open()
    p = doc.new_page()
    p.insert_text((72, 72), TITLE, fontsize=20)
    p.insert_text((72, 100), "Ada Lovelace, Example University", fontsize=10)
    p.insert_text((72, 140), "1 Introduction", fontsize=14, fontname="hebo")
    for i, t in enumerate(["Small models are cheap to run. We measured a total of 1,287 MWh for",
                           "training, see Sec. 4.2 and Fig. 3 for details. The energy was approx.",
                           "5% lower than expected."]):
        p.insert_text((72, 160 + 12 * i), t, fontsize=10)
    for i, t in enumerate(["Our second paragraph starts here and continues on a",
                           "second line that ends the para-",
                           "graph with a hyphenated word."]):
        p.insert_text((72, 210 + 12 * i), t, fontsize=10)
    p.insert_text((72, 270), "2 Method", fontsize=14, fontname="hebo")
    p.insert_text((72, 290), "We describe the setup in this section. The GPU drew 300 W on average.", fontsize=10)
    p.insert_image(pymupdf.Rect(72, 305, 252, 425), stream=alpha_png())
    p.insert_image(pymupdf.Rect(400, 305, 410, 315), stream=alpha_png(16, 16))  # a decoration
    p.insert_text((72, 440), "Figure 1: Power draw of the GPU over time.", fontsize=10)
    x0, x1, x2 = 72, 200, 320
    ys = [470, 490, 510, 530]
    for y in ys:
        p.draw_line((x0, y), (x2, y))
    for x in (x0, x1, x2):
        p.draw_line((x, ys[0]), (x, ys[-1]))
    for r, row in enumerate([["Model", "Size (GB)"], ["LLaMA-33B", "64.7"], ["LLaMA-65B", "130.6"]]):
        for c, cell in enumerate(row):
            p.insert_text(((x0, x1)[c] + 4, ys[r] + 14), cell, fontsize=10)
    p.insert_text((72, 550), "Table 1: Model sizes of two models.", fontsize=10)
    p2 = doc.new_page()
    p2.insert_text((72, 72), "3 Results", fontsize=14, fontname="hebo")
    p2.insert_text((72, 92), "Larger models use more energy, e.g. LLaMA-65B needs twice as much.", fontsize=10)
    p2.insert_text((72, 130), "References", fontsize=14, fontname="hebo")
    p2.insert_text((72, 150), "[1] A. Author, Energy of models, 2023.", fontsize=10)
    p2.insert_text((72, 176), "[2] B. Author, More energy, 2024.", fontsize=10)
    doc.save(str(path))
    return path


TABLE_MD = "| Model | Size (GB) |\n| --- | --- |\n| LLaMA-33B | 64.7 |\n| LLaMA-65B | 130.6 |"
CAPTIONED_MD = "Table 1: Model sizes of two models.\n" + TABLE_MD

# (node_id, level, text, page, page_end, title, attachment_type, is_reference, is_front_matter)
EXPECTED = [
    ("paper", "document", TITLE, 1, 2, TITLE, None, False, False),
    ("paper:sec0", "section", f"{TITLE}\n\nAda Lovelace, Example University", 1, 1, None, None, False, True),
    ("paper:sec0:p0", "paragraph", TITLE, 1, 1, None, None, False, True),
    ("paper:sec0:p0:s0", "sentence", TITLE, 1, 1, None, None, False, True),
    ("paper:sec0:p1", "paragraph", "Ada Lovelace, Example University", 1, 1, None, None, False, True),
    ("paper:sec0:p1:s0", "sentence", "Ada Lovelace, Example University", 1, 1, None, None, False, True),
    ("paper:sec1", "section",
     "Small models are cheap to run. We measured a total of 1,287 MWh for training, see Sec. 4.2 and Fig. 3 "
     "for details. The energy was approx. 5% lower than expected.\n\nOur second paragraph starts here and "
     "continues on a second line that ends the paragraph with a hyphenated word.",
     1, 1, "1 Introduction", None, False, False),
    ("paper:sec1:p0", "paragraph",
     "Small models are cheap to run. We measured a total of 1,287 MWh for training, see Sec. 4.2 and Fig. 3 "
     "for details. The energy was approx. 5% lower than expected.", 1, 1, None, None, False, False),
    ("paper:sec1:p0:s0", "sentence", "Small models are cheap to run.", 1, 1, None, None, False, False),
    ("paper:sec1:p0:s1", "sentence",
     "We measured a total of 1,287 MWh for training, see Sec. 4.2 and Fig. 3 for details.",
     1, 1, None, None, False, False),
    ("paper:sec1:p0:s2", "sentence", "The energy was approx. 5% lower than expected.", 1, 1, None, None, False, False),
    ("paper:sec1:p1", "paragraph",
     "Our second paragraph starts here and continues on a second line that ends the paragraph with a "
     "hyphenated word.", 1, 1, None, None, False, False),
    ("paper:sec1:p1:s0", "sentence",
     "Our second paragraph starts here and continues on a second line that ends the paragraph with a "
     "hyphenated word.", 1, 1, None, None, False, False),
    ("paper:sec2", "section",
     "We describe the setup in this section. The GPU drew 300 W on average.\n\n"
     "Figure 1: Power draw of the GPU over time.\n\n" + CAPTIONED_MD,
     1, 1, "2 Method", None, False, False),
    ("paper:sec2:p0", "paragraph", "We describe the setup in this section. The GPU drew 300 W on average.",
     1, 1, None, None, False, False),
    ("paper:sec2:p0:s0", "sentence", "We describe the setup in this section.", 1, 1, None, None, False, False),
    ("paper:sec2:p0:s1", "sentence", "The GPU drew 300 W on average.", 1, 1, None, None, False, False),
    ("paper:sec2:p1", "paragraph", "Figure 1: Power draw of the GPU over time.", 1, 1, None, "image", False, False),
    ("paper:sec2:p1:s0", "sentence", "Figure 1: Power draw of the GPU over time.", 1, 1, None, None, False, False),
    # the caption below the table PyMuPDF found joins it, and each row carries it
    ("paper:sec2:p2", "paragraph", CAPTIONED_MD, 1, 1, None, "table", False, False),
    ("paper:sec2:p2:s0", "sentence", "Table 1: Model sizes of two models. | Model: LLaMA-33B | Size (GB): 64.7",
     1, 1, None, None, False, False),
    ("paper:sec2:p2:s1", "sentence", "Table 1: Model sizes of two models. | Model: LLaMA-65B | Size (GB): 130.6",
     1, 1, None, None, False, False),
    ("paper:sec3", "section", "Larger models use more energy, e.g. LLaMA-65B needs twice as much.",
     2, 2, "3 Results", None, False, False),
    ("paper:sec3:p0", "paragraph", "Larger models use more energy, e.g. LLaMA-65B needs twice as much.",
     2, 2, None, None, False, False),
    ("paper:sec3:p0:s0", "sentence", "Larger models use more energy, e.g. LLaMA-65B needs twice as much.",
     2, 2, None, None, False, False),
    ("paper:sec4", "section", "[1] A. Author, Energy of models, 2023.\n\n[2] B. Author, More energy, 2024.",
     2, 2, "References", None, True, False),
    ("paper:sec4:p0", "paragraph", "[1] A. Author, Energy of models, 2023.", 2, 2, None, None, True, False),
    ("paper:sec4:p0:s0", "sentence", "[1] A. Author, Energy of models, 2023.", 2, 2, None, None, True, False),
    ("paper:sec4:p1", "paragraph", "[2] B. Author, More energy, 2024.", 2, 2, None, None, True, False),
    ("paper:sec4:p1:s0", "sentence", "[2] B. Author, More energy, 2024.", 2, 2, None, None, True, False),
]


@pytest.fixture()
def extracted(tmp_path: Path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    make_pdf(corpus / "paper.pdf")
    result = extract_corpus(corpus, ExtractParams(), tmp_path / "images", progress=False)
    return to_frames(result)


def test_pdf_round_trips_into_exact_tree(extracted):
    documents, blocks, images = extracted
    captions, _ = caption_images(images, None, progress=False)
    nodes = nodes_frame(build_tree(doc_inputs(documents, blocks, images, captions), TreeParams(), progress=False))
    got = [(r["node_id"], r["level"], r["text"], r["page"], r["page_end"], r["title"], r["attachment_type"],
            r["is_reference"], r["is_front_matter"]) for r in nodes.iter_rows(named=True)]
    assert got == EXPECTED
    # ids restart under each parent, so ancestry is a prefix test
    for r in nodes.iter_rows(named=True):
        if r["parent_id"] is not None:
            assert r["node_id"].startswith(r["parent_id"] + ":")
    assert set(nodes["source"].to_list()) == {documents["source"][0]}
    stats = tree_stats(nodes, images, captions)
    assert (stats["documents"], stats["sections"], stats["paragraphs"], stats["tables"]) == (1, 5, 10, 1)
    assert (stats["images_total"], stats["images_captioned"], stats["docs_with_numbered_sections"]) == (1, 1, 1)


def test_pdf_document_row_and_fonts(extracted):
    documents, blocks, _ = extracted
    doc = documents.row(0, named=True)
    assert (doc["doc_id"], doc["format"], doc["title"], doc["n_pages"], doc["status"]) == ("paper", "pdf", TITLE, 2, "ok")
    heading = blocks.filter(pl.col("text") == "1 Introduction").row(0, named=True)
    assert heading["font_size"] == 14.0 and heading["bold"] is True and heading["page"] == 1
    body = blocks.filter(pl.col("text").str.starts_with("Small models")).row(0, named=True)
    assert body["font_size"] == 10.0 and body["bold"] is False and body["line_height"] > 0
    assert blocks["order"].is_sorted() and blocks["order"].n_unique() == blocks.height


def test_table_read_cell_by_cell_keeps_spaces(extracted):
    _, blocks, _ = extracted
    tables = blocks.filter(pl.col("kind") == "table")
    assert tables["text"].to_list() == [TABLE_MD]
    # the table's words are not repeated as body text lines
    assert blocks.filter((pl.col("kind") == "text") & pl.col("text").str.contains("LLaMA-33B")).height == 0


def test_image_keeps_alpha_mask_and_caption(extracted):
    _, _, images = extracted
    assert images.height == 1  # the 16x16 decoration is below extract.min_image_size
    img = images.row(0, named=True)
    assert (img["image_id"], img["page"], img["width"], img["height"], img["has_pixels"]) == (
        "paper:p1:img1", 1, 120, 80, True)
    assert img["nearby_caption"] == "Figure 1: Power draw of the GPU over time."
    pix = pymupdf.Pixmap(img["path"])
    assert Path(img["path"]).suffix == ".png" and pix.alpha == 1
    assert pix.pixel(10, 10) == (200, 30, 30, 255)
    assert pix.pixel(100, 10)[3] == 0  # transparent half stays transparent (SMask applied)


# ----------------------------------------------------------------- bad files
def _bad_corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    make_pdf(corpus / "good.pdf")
    (corpus / "corrupt.pdf").write_bytes(b"%PDF-1.7\n this is not a pdf at all \x00\x01\x02")
    enc = pymupdf.open(str(corpus / "good.pdf"))
    enc.save(str(corpus / "locked.pdf"), encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="u")
    scan = pymupdf.open()
    scan.new_page().insert_image(pymupdf.Rect(50, 50, 450, 350), stream=alpha_png(200, 150))
    scan.save(str(corpus / "scanned.pdf"))
    (corpus / "empty.pdf").write_bytes(
        b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
        b"2 0 obj\n<< /Type /Pages /Kids [] /Count 0 >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n")
    (corpus / "broken.json").write_text("{not json")
    (corpus / "notes.md").write_text("# Notes on Power\n\nGPUs draw power. They also idle.\n\n## Setup\n\nWe used one H100.\n")
    (corpus / "plain.txt").write_text("Plain text title\n\nA first paragraph\nwrapped over two lines.\n\nA second one.\n")
    return corpus


def test_bad_files_are_skipped_with_clear_messages(tmp_path, capsys):
    corpus = _bad_corpus(tmp_path)
    documents, blocks, _ = to_frames(extract_corpus(corpus, ExtractParams(on_error="skip"), tmp_path / "img",
                                                    progress=False))
    status = {r["doc_id"]: (r["status"], r["message"]) for r in documents.iter_rows(named=True)}
    assert {k for k, v in status.items() if v[0] == "ok"} == {"good", "notes", "plain"}
    assert status["corrupt"][1].startswith("cannot open as PDF, corrupt or not a PDF")
    assert "encrypted" in status["locked"][1]
    assert "no text layer" in status["scanned"][1]
    assert status["empty"][1] == "the PDF has zero pages"
    assert "not valid JSON" in status["broken"][1]
    err = capsys.readouterr().err
    for name in ("corrupt.pdf", "locked.pdf", "scanned.pdf", "empty.pdf", "broken.json"):
        assert f"skipped {corpus / name}:" in err
    assert set(blocks["doc_id"].unique().to_list()) == {"good", "notes", "plain"}
    assert sorted(p.name for p in (tmp_path / "img").iterdir()) == ["good_p1_img1.png"]  # none from scanned.pdf


def test_on_error_fail_names_every_bad_file(tmp_path):
    corpus = _bad_corpus(tmp_path)
    with pytest.raises(ExtractError) as e:
        extract_corpus(corpus, ExtractParams(on_error="fail"), tmp_path / "img", progress=False)
    msg = str(e.value)
    assert "5 file(s)" in msg
    for name in ("corrupt.pdf", "locked.pdf", "scanned.pdf", "empty.pdf", "broken.json"):
        assert str(corpus / name) in msg


def test_markdown_and_text_become_trees(tmp_path):
    corpus = _bad_corpus(tmp_path)
    documents, blocks, images = to_frames(extract_corpus(corpus, ExtractParams(), None, progress=False))
    nodes = nodes_frame(build_tree(doc_inputs(documents, blocks, images, None), TreeParams(), progress=False))
    md = nodes.filter(pl.col("doc_id") == "notes")
    assert md.filter(pl.col("level") == "section")["title"].to_list() == [None, "Setup"]
    assert md.filter(pl.col("level") == "paragraph")["text"].to_list() == [
        "Notes on Power", "GPUs draw power. They also idle.", "We used one H100."]
    txt = nodes.filter((pl.col("doc_id") == "plain") & (pl.col("level") == "paragraph"))
    assert txt["text"].to_list() == ["Plain text title", "A first paragraph wrapped over two lines.", "A second one."]
    assert documents.filter(pl.col("doc_id") == "plain")["title"].to_list() == ["Plain text title"]


# ------------------------------------------------------------------ captions
def test_caption_falls_back_to_document_caption_and_skips_placeholders():
    images = pl.DataFrame({
        "image_id": ["d:p1:img1", "d:p2:img1", "d:p3:img1"], "doc_id": ["d"] * 3, "page": [1, 2, 3],
        "path": ["x.png", "y.png", None], "width": [100] * 3, "height": [100] * 3,
        "has_pixels": [True, True, False], "nearby_caption": ["Figure 2: GPU power (W) over time.", None, "Fig. 9"],
        "order": [0, 1, 2],
    })
    captions, stats = caption_images(images, None, progress=False)
    assert captions.select("image_id", "caption", "caption_source").rows() == [
        ("d:p1:img1", "Figure 2: GPU power (W) over time.", "document_caption"),
        ("d:p2:img1", None, "none"),
        ("d:p3:img1", None, "none"),
    ]
    assert (stats["document_caption"], stats["none"], stats["placeholder_skipped"]) == (1, 2, 1)


class _VisionHandler(BaseHTTPRequestHandler):
    requests: list[dict] = []

    def do_GET(self):  # noqa: N802 - the LLM client checks /v1/models before the first call
        out = json.dumps({"object": "list", "data": [{"id": "vlm", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _VisionHandler.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        out = json.dumps({
            "id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "A line chart of power (W) from 0 to 300."}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):  # keep test output quiet
        pass


def test_vision_endpoint_gets_data_url_and_prompt_through_the_cached_llm_client(tmp_path, monkeypatch):
    """Captions ask the vision endpoint through the LLM client: the key from the env var the
    params name, the image as a data URL, and a rerun served from the response cache (no request)."""
    monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("VISION_KEY", "secret")
    png = tmp_path / "a.png"
    png.write_bytes(alpha_png(80, 80))
    server = HTTPServer(("127.0.0.1", 0), _VisionHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _VisionHandler.requests = []
    images = pl.DataFrame({"image_id": ["d:p1:img1"], "doc_id": ["d"], "page": [1], "path": [str(png)],
                           "width": [80], "height": [80], "has_pixels": [True],
                           "nearby_caption": ["Figure 1: Power."], "order": [0]})
    vision = VisionParams(base_url=f"http://127.0.0.1:{server.server_port}/v1", model="vlm")
    cfg = CaptionParams()
    params = vision_llm_params(vision, LLMParams(api_key_env="VISION_KEY"))
    try:
        runs = []
        for _ in range(2):
            with llm_session(params) as client:
                runs.append(caption_images(images, vision_describer(client, cfg), progress=False))
                hits = client.stats.hits
    finally:
        server.shutdown()
    (captions, stats), (again, _) = runs
    assert captions.row(0, named=True)["caption"] == "Figure 1: Power.\nA line chart of power (W) from 0 to 300."
    assert captions.row(0, named=True)["caption_source"] == "vision" and stats["vision"] == 1
    assert again.equals(captions) and hits == 1
    posts = [r for r in _VisionHandler.requests if r["body"] is not None]
    assert len(posts) == 1, "the second run must come from the response cache"
    req = posts[0]
    assert req["path"] == "/v1/chat/completions" and req["auth"] == "Bearer secret"
    content = req["body"]["messages"][0]["content"]
    assert content[0]["text"].startswith("Describe this image from a technical document.")
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert req["body"]["model"] == "vlm" and req["body"]["max_tokens"] == 200
