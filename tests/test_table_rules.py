"""A page whose drawings make no vertical edge skips find_tables; a ruled table's page does not.

The pages are drawn the way annual reports draw statements: figures in columns with thin
horizontal rules under them (single and double underlines), or as a ruled grid. For every
page the rule calls table-free, find_tables itself must find nothing there.
"""
from __future__ import annotations

import random

import pymupdf
import pytest
from extract_helpers import draw_ruled_grid

from stages.core.extract.pdf import find_page_tables
from stages.core.extract.table_rules import may_hold_ruled_table

LINES = [("Net sales", "65,984", "61,043"), ("Cost of sales", "(40,116)", "(37,821)"),
         ("Gross margin", "25,868", "23,222"), ("Operating income", "9,114", "8,015")]


def _statement(doc: pymupdf.Document, rule_gap: float = 2.0) -> pymupdf.Page:
    """A statement set as text, with underlines under each figure column and a double one at the foot."""
    p = doc.new_page()
    p.insert_text((54, 60), "Consolidated statements of income (in millions)", fontsize=10)
    for r, row in enumerate(LINES):
        y = 90 + 18 * r
        for x, cell in zip((54, 330, 430), row):
            p.insert_text((x, y), cell, fontsize=9)
        if r in (1, 3):  # an underline under each figure column, not across the page
            for x in (325, 425):
                p.draw_line((x, y + 4), (x + 60, y + 4), width=0.5)
    y = 90 + 18 * (len(LINES) - 1) + 4
    for x in (325, 425):  # the double underline under the totals
        p.draw_line((x, y + rule_gap), (x + 60, y + rule_gap), width=0.5)
    p.draw_rect(pymupdf.Rect(54, 740, 540, 740.7), fill=(0, 0, 0), color=None)  # a separator above the footer
    return p


def _tables(page: pymupdf.Page) -> list:
    return list(page.find_tables(use_layout=False).tables)


@pytest.fixture()
def doc():
    d = pymupdf.open()
    yield d
    d.close()


def test_a_statement_with_horizontal_rules_skips_the_search_and_loses_nothing(doc):
    page = _statement(doc)
    assert page.get_cdrawings()  # it has drawings, so the old test (no drawings) ran find_tables here
    assert not may_hold_ruled_table(page.rotation, page.get_cdrawings())
    assert _tables(page) == []
    assert find_page_tables(page) == ([], False)


def test_a_ruled_grid_is_searched_and_found(doc):
    page = doc.new_page()
    draw_ruled_grid(page, LINES, [54, 300, 400, 500])
    assert may_hold_ruled_table(page.rotation, page.get_cdrawings())
    (table,), skipped = find_page_tables(page)
    assert not skipped and table.row_count == len(LINES) and table.col_count == 3


def test_shaded_rows_are_boxes_with_sides_so_the_search_runs(doc):
    page = doc.new_page()
    for r, row in enumerate(LINES):
        if r % 2 == 0:
            page.draw_rect(pymupdf.Rect(54, 78 + 18 * r, 500, 94 + 18 * r), fill=(0.9, 0.9, 0.9), color=None)
        page.insert_text((60, 90 + 18 * r), "   ".join(row), fontsize=9)
    assert may_hold_ruled_table(page.rotation, page.get_cdrawings())


def test_rules_stacked_closer_than_the_join_tolerance_count_as_tall(doc):
    # rules 2.5 pt apart chain into one 10 pt cluster: its border would be a vertical edge
    page = doc.new_page()
    for k in range(5):
        page.draw_line((54, 100 + 2.5 * k), (300, 100 + 2.5 * k), width=0.3)
    assert may_hold_ruled_table(page.rotation, page.get_cdrawings())
    # the same rules 4 pt apart are separate, each too short to make a vertical edge
    page2 = doc.new_page()
    for k in range(5):
        page2.draw_line((54, 100 + 4 * k), (300, 100 + 4 * k), width=0.3)
    assert not may_hold_ruled_table(page2.rotation, page2.get_cdrawings())


def test_a_short_vertical_tick_alone_makes_no_edge_but_a_long_one_does(doc):
    page = doc.new_page()
    page.insert_text((54, 100), "A sentence with a mark.", fontsize=10)
    page.draw_line((200, 100), (200, 102))
    assert not may_hold_ruled_table(page.rotation, page.get_cdrawings())
    page.draw_line((250, 100), (250, 110))
    assert may_hold_ruled_table(page.rotation, page.get_cdrawings())


def test_rotated_pages_are_always_searched(doc):
    page = _statement(doc)
    page.set_rotation(90)
    assert may_hold_ruled_table(page.rotation, page.get_cdrawings())


def test_a_double_underline_just_under_the_edge_length_is_still_short():
    d = pymupdf.open()
    page = _statement(d, rule_gap=2.9)
    assert not may_hold_ruled_table(page.rotation, page.get_cdrawings())
    assert _tables(page) == []
    d.close()


def test_wherever_the_rule_says_no_table_find_tables_finds_none(doc):
    """Random pages of text, rules, ticks, boxes and quads: the rule may say "maybe" wrongly, never "no"."""
    rng = random.Random(7)
    said_no = said_maybe_and_found = 0
    for _ in range(150):
        page = doc.new_page()
        for r in range(rng.randint(3, 12)):
            page.insert_text((54, 70 + 16 * r), f"Line item {r}    {rng.randint(100, 99999):,}", fontsize=9)
        for _ in range(rng.randint(1, 12)):
            x, y = rng.uniform(40, 400), rng.uniform(60, 260)
            kind = rng.choice(["h", "h", "h", "tick", "v", "box", "thin", "quad"])
            if kind == "h":
                page.draw_line((x, y), (x + rng.uniform(5, 200), y), width=0.5)
            elif kind == "tick":
                page.draw_line((x, y), (x + rng.uniform(-1, 1), y + rng.uniform(0.2, 2.9)))
            elif kind == "v":
                page.draw_line((x, y), (x, y + rng.uniform(3, 120)))
            elif kind == "box":
                page.draw_rect(pymupdf.Rect(x, y, x + rng.uniform(4, 200), y + rng.uniform(4, 80)))
            elif kind == "thin":
                page.draw_rect(pymupdf.Rect(x, y, x + rng.uniform(4, 200), y + rng.uniform(0.1, 2.5)),
                               fill=(0, 0, 0), color=None)
            else:
                page.draw_quad(pymupdf.Quad((x, y), (x + 40, y), (x, y + 30), (x + 40, y + 30)))
        maybe = may_hold_ruled_table(page.rotation, page.get_cdrawings())
        found = _tables(page)
        if not maybe:
            said_no += 1
            assert found == [], page.get_cdrawings()
        elif found:
            said_maybe_and_found += 1
    assert said_no >= 10 and said_maybe_and_found >= 1  # both sides of the rule were exercised
