"""find_tables' character list, built with the page transform done in numpy.

``page.find_tables()`` first reads every character of the page into a Python dict
(``pymupdf.table.make_chars``); its edges and its "has the candidate any text" test read
them. It transforms each character's box and origin by the page matrix through two
MuPDF calls per character (``Rect * Matrix``, ``Point * Matrix``): on text-dense pages
with a few rules (most pages of an annual report) that was ~3/4 of extraction time.

For the usual page matrix (no rotation or shear: b = c = 0, a and d = +-1, which is
every unrotated page, and find_tables derotates the others first) the transform is
``x * a + y * c + e`` evaluated in float32 as MuPDF does, with exact products, so one
vectorised float32 pass per page gives the same numbers bit for bit. Every other case
(another matrix, an inverted character box) goes to PyMuPDF's own function, and the
dicts are built with the same keys and values in the same order, so find_tables sees
the same list (tests/test_extract_table_chars.py compares the two on real pages).
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pymupdf
import pymupdf.table as _table

_ORIGINAL = _table.make_chars
_ORIGINAL_IN_RECT = _table.chars_in_rect
# the character boxes of the list chars_in_rect saw last, as arrays: (list, its length, x0, y0, x1, y1);
# holding the list keeps its id from being reused by another call's list
_boxes: list[Any] = [None, -1, None, None, None, None]


def _f32_transform(x: np.ndarray, y: np.ndarray, m: Any) -> tuple[np.ndarray, np.ndarray]:
    """fz_transform_point in float32: (x*a + y*c + e, x*b + y*d + f), left to right."""
    f = np.float32
    x, y = x.astype(f), y.astype(f)
    tx = x * f(m.a) + y * f(m.c) + f(m.e)
    ty = x * f(m.b) + y * f(m.d) + f(m.f)
    return tx.astype(np.float64), ty.astype(np.float64)


def _simple(ctm: Any) -> bool:
    return ctm.b == 0 and ctm.c == 0 and abs(ctm.a) == 1 and abs(ctm.d) == 1


def make_chars(page: Any, clip: Any = None) -> Any:
    """Drop-in for ``pymupdf.table.make_chars``: fills the same CHARS list, returns the text page."""
    ctm = page.transformation_matrix
    if not _simple(ctm):
        return _ORIGINAL(page, clip=clip)
    flags = _table.FLAGS
    textpage = page.get_textpage(clip=clip, flags=flags)
    blocks = page.get_text("rawdict", textpage=textpage)["blocks"]
    # first pass: the characters in find_tables' order, with what their dict needs
    rows: list[tuple[Any, ...]] = []
    for block in blocks:
        for line in block["lines"]:
            ldir = line["dir"]
            ldir = (round(ldir[0], 4), round(ldir[1], 4))
            upright = ldir[1] == 0
            for span in sorted(line["spans"], key=lambda s: s["bbox"][0]):
                bold = bool(span["flags"] & pymupdf.TEXT_FONT_BOLD or span["char_flags"] & 8)
                color = pymupdf.sRGB_to_pdf(span["color"])
                for char in sorted(span["chars"], key=lambda c: c["bbox"][0]):
                    rows.append((char, ldir, upright, span["font"], span["size"], bold, color))
    if not rows:
        return textpage
    bb = np.array([r[0]["bbox"] for r in rows], dtype=np.float64).reshape(-1, 4)
    org = np.array([r[0]["origin"] for r in rows], dtype=np.float64).reshape(-1, 2)
    if (bb[:, 0] > bb[:, 2]).any() or (bb[:, 1] > bb[:, 3]).any():  # MuPDF's invalid-rect rules: not ours
        _table.CHARS._list().clear()
        return _ORIGINAL(page, clip=clip)
    # a rect maps through its two corners, swapped where a or d is negative (fz_transform_rect)
    cx0, cx1 = (bb[:, 2], bb[:, 0]) if ctm.a < 0 else (bb[:, 0], bb[:, 2])
    cy0, cy1 = (bb[:, 3], bb[:, 1]) if ctm.d < 0 else (bb[:, 1], bb[:, 3])
    _, ry0 = _f32_transform(cx0, cy0, ctm)
    _, ry1 = _f32_transform(cx1, cy1, ctm)
    ox, oy = _f32_transform(org[:, 0], org[:, 1], ctm)
    page_number = page.number + 1
    doctop_base = page.rect.height * page.number
    chars = _table.CHARS._list()
    for i, (char, ldir, upright, font, size, bold, color) in enumerate(rows):
        bx0, by0, bx1, by1 = char["bbox"]
        chars.append({
            "adv": bx1 - bx0 if upright else by1 - by0,
            "bottom": by1,
            "doctop": by0 + doctop_base,
            "fontname": font,
            "height": by1 - by0,
            "matrix": (ldir[0], -ldir[1], ldir[1], ldir[0], float(ox[i]), float(oy[i])),
            "ncs": "DeviceRGB",
            "non_stroking_color": color,
            "non_stroking_pattern": None,
            "object_type": "char",
            "page_number": page_number,
            "size": size if upright else by1 - by0,
            "stroking_color": color,
            "stroking_pattern": None,
            "bold": bold,
            "text": char["c"],
            "top": by0,
            "upright": upright,
            "width": bx1 - bx0,
            "x0": bx0,
            "x1": bx1,
            "y0": float(ry0[i]),
            "y1": float(ry1[i]),
        })
    return textpage


def chars_in_rect(chars: Any, rect: Any) -> bool:
    """Drop-in for ``pymupdf.table.chars_in_rect``: whether some character lies inside `rect`.

    find_tables asks it once per cluster of vector graphics, each time walking every character
    of the page in Python; here the boxes become arrays once per list, and the same four
    comparisons (on the same float64 numbers) run in numpy."""
    lst = chars._list() if hasattr(chars, "_list") else chars
    if _boxes[0] is not lst or _boxes[1] != len(lst):
        box = np.array([(c["x0"], c["y0"], c["x1"], c["y1"]) for c in lst], dtype=np.float64).reshape(-1, 4)
        _boxes[:] = [lst, len(lst), box[:, 0], box[:, 1], box[:, 2], box[:, 3]]
    _, _, x0, y0, x1, y1 = _boxes
    r0, r1, r2, r3 = rect[0], rect[1], rect[2], rect[3]
    return bool(((r0 <= x0) & (x1 <= r2) & (r1 <= y0) & (r3 >= y1)).any())


@contextmanager
def fast_table_chars() -> Iterator[None]:
    """find_tables inside this block builds its character list with `make_chars` above and
    tests graphics clusters for text with `chars_in_rect`."""
    _table.make_chars, _table.chars_in_rect = make_chars, chars_in_rect
    try:
        yield
    finally:
        _table.make_chars, _table.chars_in_rect = _ORIGINAL, _ORIGINAL_IN_RECT
        _boxes[:] = [None, -1, None, None, None, None]
