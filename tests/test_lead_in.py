"""A lead-in paragraph ("... as follows:") brings the paragraphs it announces into the context."""
from __future__ import annotations

import polars as pl

from stages.core.index.keywords import tokenize
from stages.core.retrieve.lead_in import SEQUEL_TOKENS
from stages.core.retrieve.params import Depth, RetrieveParams
from stages.core.retrieve.ranking import build_context
from stages.core.tree.navigate import TreeView
from stages.core.tree.tables import table_row_sentences

WIDE = Depth.of(RetrieveParams(max_context_tokens=10_000))

GEO_MD = ("| | 2023 | 2022 | % Change |\n|---|---|---|---|\n| United States | 6,185 | 11,222 | (45) |\n"
          "| Developed Europe | 2,415 | 5,480 | (56) |\n| Developed Rest of World | 1,305 | 5,034 | (74) |\n"
          "| Emerging Markets | 2,828 | 6,006 | (53) |\n| Revenues | 12,734 | 27,742 | (54) |")


def make_tree(paragraphs: list[tuple[str, str | None]]) -> TreeView:
    """One section of paragraphs (text, attachment type), each split into sentences at '. ' (a table into
    its row sentences)."""
    rows = [("d", None, "document", 0, "Doc", None), ("d:sec1", "d", "section", 0, "Geographic", None)]
    for j, (text, kind) in enumerate(paragraphs):
        pid = f"d:sec1:p{j + 1}"
        rows.append((pid, "d:sec1", "paragraph", j, text, kind))
        sents = table_row_sentences(text) if kind == "table" else text.replace(". ", ".\n").splitlines()
        rows += [(f"{pid}:s{k + 1}", pid, "sentence", k, s, None) for k, s in enumerate(sents)]
    df = pl.DataFrame(rows, schema=["node_id", "parent_id", "level", "ordinal", "text", "attachment_type"],
                      orient="row")
    return TreeView(df.with_columns(pl.lit("d").alias("doc_id"), pl.lit(1).alias("page")))


LEAD = "The following summarizes revenues by geographic area:"
FOCUS = {t: 1.0 for t in tokenize("which geographic area had the biggest drop in revenues")}


def keys(units) -> list[list[str]]:
    return [u.node_ids for u in units]


def test_a_lead_in_is_followed_by_the_table_it_announces():
    tree = make_tree([("Revenues fell in every region.", None), (LEAD, None), (GEO_MD, "table"),
                      ("In May 2023, we amended our contract.", None)])
    units = build_context(tree, [[("d:sec1:p2", 0.9), ("d:sec1:p4", 0.5)]], [], WIDE, focus=FOCUS)
    assert units[0].text == LEAD
    assert units[1].media == "table" and "| Developed Rest of World | 1,305 | 5,034 | (74) |" in units[1].text
    assert units[1].score == units[0].score and units[2].node_ids == ["d:sec1:p4"]
    # without the rule the table is nowhere in the context
    assert not any("Developed" in u.text for u in units if u.node_ids[0] != units[1].node_ids[0])


def test_a_table_split_into_short_paragraphs_comes_whole_up_to_the_next_lead_in():
    """An unruled table the PDF gives as one paragraph per header cell and one for the body."""
    body = ("% Change United States $ 6,185 $ 11,222 (45) Developed Europe 2,415 5,480 (56) Developed Rest of "
            "World 1,305 5,034 (74)")
    tree = make_tree([(LEAD, None), ("Three Months Ended", None), ("(MILLIONS)", None), ("July 2, 2023", None),
                      (body, None), ("Revenues by segment were as follows:", None), ("Biopharma $ 12,418", None)])
    units = build_context(tree, [[("d:sec1:p1:s1", 0.9)]], [], WIDE, focus=FOCUS)
    assert keys(units) == [["d:sec1:p1:s1"], ["d:sec1:p2", "d:sec1:p3", "d:sec1:p4", "d:sec1:p5", "d:sec1:p6"]]
    assert units[1].text.endswith("Revenues by segment were as follows:") and "(74)" in units[1].text


def test_header_paragraphs_before_the_table_come_with_it_and_the_table_is_cut_to_the_questions_rows():
    big = GEO_MD + "".join(f"\n| Other line {k} | {k},000 | {k},100 | (1) |" for k in range(30))
    tree = make_tree([(LEAD, None), ("Year Ended December 31, (MILLIONS)", None), (big, "table")])
    units = build_context(tree, [[("d:sec1:p1", 0.9)]], [], WIDE, focus=FOCUS)
    assert keys(units)[:2] == [["d:sec1:p1"], ["d:sec1:p2"]]
    assert units[2].media == "table" and "Other line" not in units[2].text
    assert all(n.startswith("d:sec1:p3:") for n in units[2].node_ids)  # the rows kept, not the whole table
    # without a question to cut it by, the whole table is too long to follow the lead-in
    assert keys(build_context(tree, [[("d:sec1:p1", 0.9)]], [], WIDE)) == [["d:sec1:p1"]]


def test_no_sequel_when_the_colon_is_not_the_paragraphs_end_or_the_sequel_is_long_or_already_there():
    long_prose = " ".join(["Sales grew in the quarter because of demand."] * 40)
    assert len(long_prose) / 4 > SEQUEL_TOKENS
    tree = make_tree([("Two regions matter: Europe and Asia. Both grew.", None), ("Europe grew 5%.", None),
                      (LEAD, None), (long_prose, None), (LEAD, None), (GEO_MD, "table")])
    mid = build_context(tree, [[("d:sec1:p1:s1", 0.9)]], [], WIDE, focus=FOCUS)
    assert keys(mid) == [["d:sec1:p1:s1", "d:sec1:p1:s2"]]  # the window ends on "Both grew."
    assert keys(build_context(tree, [[("d:sec1:p3", 0.9)]], [], WIDE, focus=FOCUS)) == [["d:sec1:p3"]]
    # the table's row is already in the context: it is not sent twice
    row = build_context(tree, [[("d:sec1:p6:s4", 0.9), ("d:sec1:p5", 0.8)]], [], WIDE, focus=FOCUS)
    assert keys(row) == [["d:sec1:p6:s4"], ["d:sec1:p5"]]


def test_a_table_row_ending_in_a_colon_is_no_lead_in():
    md = "| Item | 2023 |\n|---|---|\n| Current assets: | |\n| Cash | 5 |"
    tree = make_tree([(md, "table"), ("The notes follow.", None)])
    units = build_context(tree, [[("d:sec1:p1:s1", 0.9)]], [], WIDE, focus=FOCUS)
    assert keys(units) == [["d:sec1:p1:s1"]]


def test_a_sequel_the_budget_has_no_room_for_is_left_out_and_the_context_goes_on():
    tree = make_tree([(LEAD, None), (GEO_MD, "table"), ("Revenues fell in every region.", None)])
    dense = [[("d:sec1:p1", 0.9), ("d:sec1:p3", 0.8)]]
    room = Depth(WIDE.top_k, WIDE.bm25_k, WIDE.top_k_final, 40)  # the lead-in and the last sentence, not the table
    units = build_context(tree, dense, [], room, focus=FOCUS)
    assert keys(units) == [["d:sec1:p1"], ["d:sec1:p3"]]
    assert [u.source for u in build_context(tree, dense, [], WIDE, focus=FOCUS)] == ["dense", "lead-in", "dense"]
