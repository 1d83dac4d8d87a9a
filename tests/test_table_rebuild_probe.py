"""bench/table_rebuild_probe.py: a rebuilt table is kept only when it regroups the extracted words."""
from __future__ import annotations

from bench.table_rebuild_probe import check
from stages.core.tree.tables import table_parts

GLUED = ("Table 4: Request traces.\n| Trace | # Requests lp lg |\n|---|---|\n"
         "| Azure-Conv | 19366 1154.7 211.1 |\n| Kimi-TA | 23608 8560.0 182.1 |")


def _parts():
    _, header, rows = table_parts(GLUED, cut_caption=False)
    return header, rows


def test_a_regrouping_of_the_same_words_is_kept():
    reply = {"columns": ["Trace", "# Requests", "lp", "lg"],
             "rows": [["Azure-Conv", "19366", "1154.7", "211.1"], ["Kimi-TA", "23608", "8560.0", "182.1"]]}
    assert check(reply, *_parts()) == "kept"


def test_dropped_invented_or_ragged_replies_are_not_kept():
    header, rows = _parts()
    dropped = {"columns": ["Trace", "# Requests lp", "lg"],  # the model's real reply: lg's values left out
               "rows": [["Azure-Conv", "19366", "1154.7"], ["Kimi-TA", "23608", "8560.0"]]}
    assert check(dropped, header, rows) == "row words changed"
    invented = {"columns": ["Trace", "# Requests", "lp", "lg (s)"],
                "rows": [["Azure-Conv", "19366", "1154.7", "211.1"], ["Kimi-TA", "23608", "8560.0", "182.1"]]}
    assert check(invented, header, rows) == "header words changed"
    ragged = {"columns": ["Trace", "# Requests", "lp", "lg"],
              "rows": [["Azure-Conv", "19366", "1154.7 211.1"], ["Kimi-TA", "23608", "8560.0", "182.1"]]}
    assert check(ragged, header, rows) == "a row not as wide as the columns"
    assert check({"columns": ["Trace", "lg"], "rows": [["Azure-Conv", "1"]]}, header, rows) == "1 rows for 2"
    assert check(None, header, rows) == "no table"
