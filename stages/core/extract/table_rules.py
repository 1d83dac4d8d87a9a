"""Whether a page's vector drawings can make a ruled table at all, decided from the drawings alone.

find_tables (lines strategy, PyMuPDF's default settings) builds a table from cells, a cell from
four intersections of a vertical and a horizontal edge, and edges only from vector paths: each
line, rectangle side or quad side, plus the border of every cluster of touching paths that holds
text. Vertical edges shorter than 1 pt are dropped, the rest snapped (x within 3 pt) and joined
(collinear, gaps of 3 pt or less), and whatever is still shorter than ``edge_min_length`` (3 pt)
dropped. So if every vertical extent on the page is short, no vertical edge survives, no cell can
form, and find_tables finds nothing; but before it gets there it reads every character of the page
into Python (~0.1 s on a text page). Most pages of a filing are drawn that way: text with thin
horizontal rules (underlines under the figures, a separator above the footer).

The test: project every path's box and every item's vertical extent onto the y axis, merge
extents whose gap is at most the join tolerance; when no merged extent reaches the minimum edge
length, no vertical edge can (a cluster's box, an edge and a join all lie inside one merged
extent). Ignoring x only merges more, so the test can say "maybe a table" where there is none,
never the reverse. Rotated pages are left to find_tables (it derotates them first).
"""
from __future__ import annotations

from typing import Any

EDGE_MIN_LENGTH = 3.0  # find_tables' edge_min_length
JOIN_TOLERANCE = 3.0  # find_tables' join_tolerance (and snap_tolerance)


def _y_extents(paths: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """The vertical extent of every path's box and of every line, rectangle and quad in it."""
    out: list[tuple[float, float]] = []
    for path in paths:
        r = path["rect"]
        out.append((min(r[1], r[3]), max(r[1], r[3])))
        for item in path["items"]:
            kind = item[0]
            if kind == "l":
                ys = (item[1][1], item[2][1])
            elif kind == "re":
                ys = (item[1][1], item[1][3])
            elif kind == "qu":
                ys = tuple(point[1] for point in item[1])
            else:  # curves make no edges; their path's box is counted above
                continue
            out.append((min(ys), max(ys)))
    return out


def may_hold_ruled_table(rotation: int, paths: list[dict[str, Any]]) -> bool:
    """False when `paths` (``page.get_cdrawings()``) cannot give find_tables a vertical edge."""
    if rotation:
        return True
    lo = hi = 0.0
    started = False
    for a, b in sorted(_y_extents(paths)):
        if not started or a > hi + JOIN_TOLERANCE:
            lo, hi, started = a, b, True
        else:
            hi = max(hi, b)
        if hi - lo >= EDGE_MIN_LENGTH:
            return True
    return False
