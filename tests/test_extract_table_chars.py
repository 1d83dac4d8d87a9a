"""find_tables' character list built in numpy (stages/core/extract/table_chars.py) vs PyMuPDF's own.

Real PDFs: the corpus2 manuals (ruled tables: booktabs, setspace-doc, a beamer talk) and
pages generated here with PyMuPDF (a ruled table, rotated and sheared text, a mediabox
that does not start at the origin)."""
from __future__ import annotations

from pathlib import Path

import pymupdf
import pymupdf.table as T
import pytest

from stages.core.extract import table_chars
from stages.core.extract.pdf import find_page_tables, read_table_cells

CORPUS2 = Path(__file__).parent / "data" / "corpus2" / "corpus"


def chars_of(fn, page: pymupdf.Page) -> list[dict]:
    """CHARS as find_tables fills it (its glyph-height and quad settings on)."""
    small = bool(pymupdf.TOOLS.set_small_glyph_heights())
    quad = pymupdf.TOOLS.unset_quad_corrections()
    pymupdf.TOOLS.set_small_glyph_heights(True)
    try:
        T._CHARS_VAR.set([])
        fn(page)
        return [list(c.items()) for c in T.CHARS]  # key order and values, bit for bit (floats compare exactly)
    finally:
        pymupdf.TOOLS.set_small_glyph_heights(small)
        pymupdf.TOOLS.unset_quad_corrections(quad)


def generated_pdf(tmp_path: Path) -> Path:
    doc = pymupdf.open()
    page = doc.new_page(width=612, height=792)
    y = 100
    for r in range(4):  # a 4 x 3 ruled table with text in every cell
        for c in range(3):
            page.insert_text((80 + c * 120, y + 14), f"cell {r},{c} $ 1,234.5", fontsize=9)
        y += 20
    for k in range(5):
        page.draw_line((72, 100 + k * 20), (432, 100 + k * 20))
    for k in range(4):
        page.draw_line((72 + k * 120, 100), (72 + k * 120, 180))
    page.insert_text((500, 700), "rotated side note", rotate=90, fontsize=8)
    page.insert_text((100, 400), "sheared", morph=(pymupdf.Point(100, 400), pymupdf.Matrix(1, 0, 0.3, 1, 0, 0)))
    page2 = doc.new_page(width=500, height=700)
    page2.set_mediabox(pymupdf.Rect(20, 30, 480, 680))  # the page matrix gets a translation
    page2.insert_text((60, 90), "offset mediabox text (12)", fontsize=11)
    page2.draw_rect(pymupdf.Rect(50, 70, 300, 120))
    out = tmp_path / "gen.pdf"
    doc.save(out)
    return out


def test_same_chars_as_pymupdf_on_real_pages():
    pdfs = sorted(CORPUS2.glob("*.pdf"))
    assert pdfs
    pages = 0
    for pdf in pdfs:
        doc = pymupdf.open(pdf)
        for pno in range(0, doc.page_count, 3):
            page = doc[pno]
            ours = chars_of(table_chars.make_chars, page)
            assert ours == chars_of(table_chars._ORIGINAL, page), (pdf.name, pno)
            pages += bool(ours)
    assert pages > 10


def test_same_chars_on_rotated_sheared_and_offset_pages(tmp_path):
    doc = pymupdf.open(generated_pdf(tmp_path))
    for page in doc:
        ours = chars_of(table_chars.make_chars, page)
        assert ours and ours == chars_of(table_chars._ORIGINAL, page)
    dirs = {dict(c)["upright"] for c in chars_of(table_chars.make_chars, doc[0])}
    assert dirs == {True, False}  # the rotated line went through the same path


def test_same_tables_and_cells_with_and_without(tmp_path):
    doc = pymupdf.open(generated_pdf(tmp_path))
    page = doc[0]
    ours, skipped = find_page_tables(page)
    assert not skipped and len(ours) == 1
    theirs = list(page.find_tables(use_layout=False).tables)  # PyMuPDF's character list
    assert [t.bbox for t in ours] == [t.bbox for t in theirs]
    assert read_table_cells(page, ours[0]) == read_table_cells(page, theirs[0])
    assert read_table_cells(page, ours[0])[1][2] == "cell 1,2 $ 1,234.5"


def test_patch_only_inside_the_block():
    assert T.make_chars is table_chars._ORIGINAL
    with table_chars.fast_table_chars():
        assert T.make_chars is table_chars.make_chars
    assert T.make_chars is table_chars._ORIGINAL
    with pytest.raises(RuntimeError), table_chars.fast_table_chars():
        raise RuntimeError("find_tables failed")
    assert T.make_chars is table_chars._ORIGINAL


def test_chars_in_rect_agrees_with_pymupdf():
    doc = pymupdf.open(CORPUS2 / "booktabs.pdf")
    checked = hits = 0
    for page in list(doc)[:6]:
        T._CHARS_VAR.set([])
        table_chars.make_chars(page)
        boxes = [dict(c) for c in T.CHARS][::7]
        rects = [pymupdf.Rect(d["rect"]) for d in page.get_drawings()]
        rects += [pymupdf.Rect(c["x0"], c["y0"], c["x1"], c["y1"]) for c in boxes]  # exactly one char's box
        rects += [pymupdf.Rect(c["x0"], c["y0"], c["x1"] - 0.01, c["y1"]) for c in boxes]  # a hair too small
        rects += [page.rect, pymupdf.Rect(0, 0, 1, 1)]
        for r in rects:
            ours = table_chars.chars_in_rect(T.CHARS, r)
            assert ours == table_chars._ORIGINAL_IN_RECT(T.CHARS, r), r
            checked += 1
            hits += ours
    assert checked > 100 and 0 < hits < checked
