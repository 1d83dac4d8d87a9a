"""Table cells read from one text extraction of the page (PageChars), as page.get_textbox reads each cell."""
from __future__ import annotations

import pymupdf
import pytest
from extract_helpers import draw_ruled_grid

from stages.core.extract.pdf import PageChars, find_page_tables, read_table_cells

ROWS = [["Line item", "Fiscal 2024", "Fiscal 2023"],
        ["Net cash provided by operating activities", "$ 1,234.5", "(567.8)"],
        ["Research and development", "$ 98.0", "$ 87.25"],
        ["Total  liabilities and equity", "12.5 %", "n/a"]]


@pytest.fixture()
def page():
    doc = pymupdf.open()
    p = doc.new_page()
    p.insert_text((54, 60), "Consolidated statements of cash flows, in millions.", fontsize=10)
    ys = draw_ruled_grid(p, ROWS, [54, 300, 400, 500])
    p.insert_text((400 - 6, ys[-1] + 30), "overhang", fontsize=9)  # below the table: no cell
    p.insert_text((54, ys[-1] + 50), "Text after the table.", fontsize=10)
    yield p
    doc.close()


def test_cells_keep_the_spaces_between_words(page):
    (table,), skipped = find_page_tables(page)
    assert not skipped
    expected = [[" ".join(c.split()) for c in row] for row in ROWS]  # whitespace runs become one space
    assert read_table_cells(page, table) == expected
    assert read_table_cells(page, table, PageChars(page)) == expected


def test_each_cell_equals_get_textbox_byte_for_byte(page):
    (table,), _ = find_page_tables(page)
    chars = PageChars(page)
    cells = [c for row in table.rows for c in row.cells if c is not None]
    assert len(cells) == 12
    for c in cells:
        assert chars.textbox(c) == page.get_textbox(pymupdf.Rect(c))
    # rectangles that cut through words and lines, and the whole page, read the same too
    for rect in [(60, 85, 120, 140), (0, 0, 1000, 1000), (300.5, 80, 350, 95), (54, 55, 200, 63)]:
        assert chars.textbox(rect) == page.get_textbox(pymupdf.Rect(rect)), rect


def test_a_page_without_drawings_skips_the_table_search():
    doc = pymupdf.open()
    p = doc.new_page()
    for i, row in enumerate(ROWS):
        p.insert_text((54, 80 + 14 * i), "    ".join(row), fontsize=9)
    assert p.get_cdrawings() == []
    assert list(p.find_tables(use_layout=False).tables) == []  # what the skip saves: nothing to find
    assert find_page_tables(p) == ([], False)
    assert find_page_tables(p, 0) == ([], False)
