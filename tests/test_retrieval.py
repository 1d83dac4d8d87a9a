"""Cross-query rerank, context expansion, tree dedup, fusion and the token budget."""
from __future__ import annotations

import polars as pl
import pytest

from stages.core.index.keywords import tokenize
from stages.core.retrieve import table_trim
from stages.core.retrieve.params import Depth, RetrieveParams
from stages.core.retrieve.ranking import build_context, count_tokens, extend_context, rerank
from stages.core.tree.navigate import TreeView, is_ancestor


def depth(max_context_tokens: int = 10_000, top_k_final: int = 16) -> Depth:
    """The shipped search depth with a budget and a unit cap of the test's choosing."""
    d = Depth.of(RetrieveParams(max_context_tokens=max_context_tokens))
    return Depth(d.top_k, d.bm25_k, top_k_final, d.max_context_tokens)


WIDE = depth()


def make_tree() -> TreeView:
    rows = [("d", None, "document", 0, "Doc")]
    rows += [("d:sec1", "d", "section", 0, "Intro")]
    sents = {
        "d:sec1:p1": ["Alpha one.", "Alpha two.", "Alpha three.", "Alpha four.", "Alpha five."],
        "d:sec1:p2": ["Beta one.", "Beta two."],
        "d:sec1:p3": ["Gamma one."],
    }
    for j, (pid, ss) in enumerate(sents.items()):
        rows.append((pid, "d:sec1", "paragraph", j, " ".join(ss)))
        rows += [(f"{pid}:s{k + 1}", pid, "sentence", k, s) for k, s in enumerate(ss)]
    df = pl.DataFrame(rows, schema=["node_id", "parent_id", "level", "ordinal", "text"], orient="row")
    return TreeView(df.with_columns(pl.lit("d").alias("doc_id"), pl.lit(1).alias("page")))


def test_frequency_is_counted_before_dedup():
    per_query = [[("a", 0.5), ("b", 0.9)], [("a", 0.4)], [("a", 0.3), ("c", 0.95)]]
    ranked = rerank(per_query)
    # a: hit by all three queries; c outscores b on similarity
    assert [(h.node_id, h.frequency) for h in ranked] == [("a", 3), ("c", 1), ("b", 1)]
    assert ranked[0].score == pytest.approx(1.2)


def test_combined_rerank_weighs_frequency_and_similarity_equally():
    # a: hit twice (frequency 1 after min-max) with the lower summed similarity (0); b: the reverse.
    # Equal weights tie them, and the summed similarity breaks the tie
    assert [h.node_id for h in rerank([[("a", 0.2), ("b", 0.9)], [("a", 0.1)]])] == ["b", "a"]
    assert [h.node_id for h in rerank([[("a", 0.2), ("b", 0.9)], [("a", 0.8)]])] == ["a", "b"]


def test_sentence_expands_to_sibling_window_and_windows_merge():
    tree = make_tree()
    units = build_context(tree, [[("d:sec1:p1:s2", 0.9), ("d:sec1:p1:s4", 0.8)]], [], WIDE)
    assert len(units) == 1
    assert units[0].node_ids == ["d:sec1:p1:s1", "d:sec1:p1:s2", "d:sec1:p1:s3", "d:sec1:p1:s4", "d:sec1:p1:s5"]
    one = build_context(tree, [[("d:sec1:p1:s2", 0.9)]], [], WIDE)
    assert one[0].text == "Alpha one. Alpha two. Alpha three."  # one sentence on each side


def test_tree_dedup_drops_descendants_of_included_paragraph():
    tree = make_tree()
    units = build_context(tree, [[("d:sec1:p2:s1", 0.9), ("d:sec1:p2", 0.8), ("d:sec1:p3:s1", 0.7)]], [], WIDE)
    assert [u.key for u in units] == ["d:sec1:p2", "d:sec1:p3:s1"]
    assert units[0].text == "Beta one. Beta two."
    assert not any(is_ancestor(a.key, b.key) for a in units for b in units)


def test_rrf_fusion_weighs_bm25_and_adds_a_covered_units_share():
    tree = make_tree()
    dense = [[("d:sec1:p1:s1", 0.9)]]
    kw = [(["d:sec1:p3"], 7.0), (["d:sec1:p1"], 3.0)]
    rrf = build_context(tree, dense, kw, WIDE)
    # p1 (bm25 rank 2) holds the dense window: one unit, found by both, with both shares
    assert [u.key for u in rrf] == ["d:sec1:p1", "d:sec1:p3"]
    assert rrf[0].source == "both"
    assert rrf[0].score == pytest.approx(1 / 61 + 2 / 62)  # dense rank 1 + bm25 rank 2 at twice the weight
    assert rrf[1].score == pytest.approx(2 / 61)


def test_bm25_sentence_window_hit_becomes_one_unit_and_merges_with_dense_window():
    tree = make_tree()
    kw = [(["d:sec1:p1:s3", "d:sec1:p1:s4"], 5.0), (["d:sec1:p3"], 2.0)]
    units = build_context(tree, [[("d:sec1:p1:s1", 0.9)]], kw, WIDE)
    # dense window s1..s2 and the BM25 window s3..s4 touch: one unit s1..s4, found by both
    assert units[0].node_ids == ["d:sec1:p1:s1", "d:sec1:p1:s2", "d:sec1:p1:s3", "d:sec1:p1:s4"]
    assert units[0].text == "Alpha one. Alpha two. Alpha three. Alpha four."
    assert units[0].source == "both"
    assert [u.key for u in units[1:]] == ["d:sec1:p3"]


def test_budget_drops_lowest_ranked_units_first():
    tree = make_tree()
    dense = [[("d:sec1:p3:s1", 0.9), ("d:sec1:p2", 0.8), ("d:sec1:p1", 0.7)]]
    units = build_context(tree, dense, [], depth(9))
    assert [u.key for u in units] == ["d:sec1:p3:s1", "d:sec1:p2"]
    assert sum(u.n_tokens for u in units) <= 9
    assert count_tokens("Beta one. Beta two.") == 5  # 19 characters, 4 a token


def test_the_first_unit_over_the_budget_ends_the_context():
    tree = make_tree()
    # p3:s1 (3 tokens), then p1 (16 tokens) does not fit a budget of 9: p2 (5 tokens) after it stays out
    dense = [[("d:sec1:p3:s1", 0.9), ("d:sec1:p1", 0.8), ("d:sec1:p2", 0.7)]]
    assert [u.key for u in build_context(tree, dense, [], depth(9))] == ["d:sec1:p3:s1"]
    # the best unit alone over the budget is cut to it
    cut = build_context(tree, [[("d:sec1:p1", 0.9)]], [], depth(5))
    assert len(cut) == 1 and cut[0].n_tokens == 5 and cut[0].text == "Alpha one. Alpha two"  # 20 characters


def test_top_k_final_caps_units():
    tree = make_tree()
    dense = [[("d:sec1:p3:s1", 0.9), ("d:sec1:p2", 0.8), ("d:sec1:p1", 0.7)]]
    units = build_context(tree, dense, [], depth(top_k_final=2))
    assert len(units) == 2


def test_retry_depth_scales_every_limit_together():
    d = Depth.of(RetrieveParams(max_context_tokens=700), 2.0)
    assert (d.top_k, d.bm25_k, d.top_k_final, d.max_context_tokens) == (20, 16, 32, 1400)
    assert Depth.of(RetrieveParams(max_context_tokens=700), 500 / 700).top_k == 8  # rounded up


def test_retry_context_keeps_previous_units_first_and_adds_new_ones():
    tree = make_tree()
    first = build_context(tree, [[("d:sec1:p3:s1", 0.9)]], [], WIDE)
    wider = build_context(tree, [[("d:sec1:p2", 0.95), ("d:sec1:p3:s1", 0.9), ("d:sec1:p1:s1", 0.5)]], [], WIDE)
    ext = extend_context(first, wider, WIDE)
    assert [u.key for u in ext] == ["d:sec1:p3:s1", "d:sec1:p2", "d:sec1:p1:s1"]
    assert ext[0] is first[0]


# --- the answer unit --------------------------------------------------------------------

TABLE_MD = ("Table 3: Power of common models.\n| Model | Power (W) | Hours |\n|---|---|---|\n"
            "| ELMo | 517.66 | 336 |\n| BERT | 12,041 | 79 |\n| GPT-2 | 1,516 | 168 |")


def make_table_tree(table_md: str = TABLE_MD, power: str = "300 W") -> TreeView:
    """A prose paragraph with a wattage, a prose paragraph without one, and a three-row table."""
    from stages.core.tree.tables import table_row_sentences

    rows = [("d", None, "document", 0, "Doc", None), ("d:sec1", "d", "section", 0, "Results", None)]
    prose = {"d:sec1:p1": ["We trained many models on the cluster.", "The runs took weeks."],
             "d:sec1:p2": [f"The GPU drew {power} on average.", "That is a lot."]}
    for j, (pid, ss) in enumerate(prose.items()):
        rows.append((pid, "d:sec1", "paragraph", j, " ".join(ss), None))
        rows += [(f"{pid}:s{k + 1}", pid, "sentence", k, s, None) for k, s in enumerate(ss)]
    rows.append(("d:sec1:p3", "d:sec1", "paragraph", 2, table_md, "table"))
    rows += [(f"d:sec1:p3:s{k + 1}", "d:sec1:p3", "sentence", k, s, None)
             for k, s in enumerate(table_row_sentences(table_md))]
    df = pl.DataFrame(rows, schema=["node_id", "parent_id", "level", "ordinal", "text", "attachment_type"],
                      orient="row")
    return TreeView(df.with_columns(pl.lit("d").alias("doc_id"), pl.lit(1).alias("page")))


def test_unit_pattern_spellings():
    from stages.core.retrieve.answer_unit import unit_pattern

    assert unit_pattern("is_blank") is None and unit_pattern(None) is None and unit_pattern("") is None
    pct = unit_pattern("percent")
    assert pct.search("rose by 40%") and pct.search("40 percent")
    watt = unit_pattern("W")
    assert watt.search("300 W on average") and watt.search("Power (W): 517.66")
    assert watt.search("5 kW")  # the family: a quantity in watts is often written in kW
    assert not watt.search("We trained")  # not the capital of a word
    usd = unit_pattern("USD per hour")
    assert usd.search("$3.06") and usd.search("costs 12 dollars") and usd.search("per hour")
    assert unit_pattern("multiplier").search("a 3x gain")


def test_holds_unit_in_prose_and_table_rows():
    from stages.core.retrieve.answer_unit import holds_unit, unit_pattern
    from stages.core.retrieve.units import RetrievedUnit

    w = unit_pattern("W")
    prose = lambda t: RetrievedUnit("k", "d", ["k"], t, 1.0)  # noqa: E731
    assert holds_unit(prose("The GPU drew 300 W on average."), w)
    assert not holds_unit(prose("W is a letter; we ran 3 jobs."), w)  # the unit must follow a number
    assert holds_unit(prose("It cost $3,000."), unit_pattern("USD"))
    row = RetrievedUnit("k", "d", ["k"], "Table 3: Power | Model: ELMo | Power (W): 517.66 | Hours: 336", 1.0, media="table")
    assert holds_unit(row, w)  # a row: the unit in the header, the number in a cell
    assert not holds_unit(row, unit_pattern("liters"))


def test_unit_boost_moves_a_unit_with_the_answer_unit_up():
    tree = make_table_tree()
    kw = [(["d:sec1:p1"], 9.0), (["d:sec1:p2"], 5.0)]
    assert [u.key for u in build_context(tree, [], kw, WIDE, "W")] == ["d:sec1:p2", "d:sec1:p1"]
    # no unit (names, True/False) or a unit the text does not state: the fused order stands
    assert [u.key for u in build_context(tree, [], kw, WIDE, "is_blank")] == ["d:sec1:p1", "d:sec1:p2"]
    assert [u.key for u in build_context(tree, [], kw, WIDE, "liters")] == ["d:sec1:p1", "d:sec1:p2"]
    assert [u.key for u in build_context(tree, [], kw, WIDE, "MWh")] == ["d:sec1:p1", "d:sec1:p2"]
    # a number in any unit of the answer unit's family counts ("watts" for a question in kW),
    # but not single letters ("300 W"): "s", "h", "g", "t", "L" stand for too much else
    assert [u.key for u in build_context(tree, [], kw, WIDE, "kW")] == ["d:sec1:p1", "d:sec1:p2"]
    with_watts = make_table_tree(power="300 watts")
    assert [u.key for u in build_context(with_watts, [], kw, WIDE, "kW")] == ["d:sec1:p2", "d:sec1:p1"]


def test_unit_family_spellings():
    from stages.core.common.vocab import unit_family_spellings
    from stages.core.retrieve.answer_unit import unit_pattern

    assert {"kWh", "MWh", "TWh", "joules"} <= unit_family_spellings("GWh")
    assert {"hours", "minutes", "years"} <= unit_family_spellings("days") and "km" not in unit_family_spellings("days")
    assert {"kg", "lbs"} <= unit_family_spellings("tCO2e")  # the leading word of a CO2 unit
    assert unit_family_spellings("USD") == set() and unit_family_spellings("L/kWh") == set()
    assert unit_pattern("km").search("logged 1,500,000 miles")


# --- long tables trimmed to the question's rows -------------------------------------------

@pytest.fixture
def trim_at(monkeypatch: pytest.MonkeyPatch):
    """Set the table trim's token limit (80 shipped) so the small test tables are long enough to trim."""
    return lambda tokens: monkeypatch.setattr(table_trim, "TRIM_TABLE_TOKENS", tokens)


def test_table_trim_keeps_caption_header_and_the_rows_the_question_names(trim_at):
    tree = make_table_tree()
    dense = [[("d:sec1:p3", 0.9), ("d:sec1:p1", 0.8)]]
    focus = {t: 2.0 for t in tokenize("BERT")} | {t: 0.5 for t in tokenize("power")}
    # a table within the limit (this one is ~48 tokens) stays whole
    whole = build_context(tree, dense, [], WIDE, focus=focus)
    assert whole[0].node_ids == ["d:sec1:p3"] and "ELMo" in whole[0].text
    trim_at(20)
    units = build_context(tree, dense, [], WIDE, focus=focus)
    assert units[0].node_ids == ["d:sec1:p3:s2"]  # the BERT row, as a row of its table
    assert units[0].text == ("Table 3: Power of common models.\n| Model | Power (W) | Hours |\n"
                             "| BERT | 12,041 | 79 |")
    assert units[1].text == whole[1].text  # prose stays whole
    # no row named more than another: the table stays whole
    same = build_context(tree, dense, [], WIDE, focus={t: 1.0 for t in tokenize("power")})
    assert same[0].node_ids == ["d:sec1:p3"]
    # a limit that holds two rows keeps the best two, in table order
    trim_at(30)
    two = build_context(tree, dense, [], WIDE, focus=focus | {t: 1.0 for t in tokenize("ELMo")})
    assert two[0].node_ids == ["d:sec1:p3:s1", "d:sec1:p3:s2"]


def test_table_trim_ties_keep_every_row_as_rich_as_the_best(trim_at):
    """Rows the question's keywords cannot tell from the best row (a model's before and after rows)
    stay together past the limit; a tie further down does not."""
    trim_at(20)
    tree = make_table_tree()
    dense = [[("d:sec1:p3", 0.9)]]
    two_best = {t: 2.0 for t in tokenize("ELMo BERT")}
    assert build_context(tree, dense, [], WIDE, focus=two_best)[0].node_ids == ["d:sec1:p3:s1", "d:sec1:p3:s2"]
    one_best = {t: 2.0 for t in tokenize("BERT")} | {t: 1.0 for t in tokenize("ELMo GPT")}
    assert build_context(tree, dense, [], WIDE, focus=one_best)[0].node_ids == ["d:sec1:p3:s2"]


def test_table_trim_groups_keep_the_best_rows_namesakes_in_other_row_groups(trim_at):
    """"Qwen (After optimization)" is the best row, and the "Qwen" row of the group above it joins it past
    the limit (a change between the groups needs both); other rows do not."""
    trim_at(20)
    md = ("Table 3: Carbon per inference.\n| Model | CO2 (kg) |\n|---|---|\n| Llama | 0.012 |\n| Qwen | 0.009 |\n"
          "| Llama (After optimization) | 0.005 |\n| Qwen (After optimization) | 0.004 |")
    tree = make_table_tree(md)
    dense = [[("d:sec1:p3", 0.9)]]
    focus = {t: 2.0 for t in tokenize("Qwen")} | {t: 1.0 for t in tokenize("after optimization")}
    kept = build_context(tree, dense, [], WIDE, focus=focus)[0]
    assert kept.node_ids == ["d:sec1:p3:s2", "d:sec1:p3:s4"]
    assert "| Qwen | 0.009 |" in kept.text and "Llama" not in kept.text



def test_table_trim_keeps_the_rows_of_the_metrics_line_items_first():
    """An operating margin needs "Operating income" and "Total revenue"; "Total non-operating income
    (expense), net" shares more of the question's words than "Operating income" does, and the
    statement's long caption leaves room for two rows: the line items' rows are kept first."""
    from stages.core.plan.metrics import operand_items

    md = ("CONSOLIDATED STATEMENTS OF INCOME (In millions, except per share data) Years Ended December 2, "
          "December 3, November 27,\n| | 2022 | 2021 | 2020 |\n|---|---|---|---|\n| Revenue: | | | |\n"
          "| Subscription | 16,388 | 14,573 | 11,626 |\n| Total revenue | 17,606 | 15,785 | 12,868 |\n"
          "| Total operating expenses | 9,343 | 8,118 | 6,909 |\n| Operating income | 6,098 | 5,802 | 4,237 |\n"
          "| Non-operating income (expense): | | | |\n| Interest expense | (112) | (113) | (116) |\n"
          "| Total non-operating income (expense), net | (90) | (97) | (61) |\n| Net income | 4,756 | 4,822 | 5,260 |")
    tree = make_table_tree(md)
    dense = [[("d:sec1:p3", 0.9)]]
    question = "Does the company have an improving operating margin profile as of FY2022?"
    items = operand_items(question)
    assert [i.key for i in items] == ["operating_income", "revenue"]
    focus = ({t: 2.0 for t in tokenize("operating margin")}
             | {t: 1.0 for t in tokenize("operating income total revenue net sales")})
    by_words = build_context(tree, dense, [], WIDE, focus=focus)[0].text
    assert "| Total non-operating income (expense), net |" in by_words and "| Operating income |" not in by_words
    kept = build_context(tree, dense, [], WIDE, focus=focus, items=items)[0].text
    assert "| Operating income | 6,098 |" in kept and "| Total revenue | 17,606 |" in kept
    assert "| Revenue: |" not in kept and "| Subscription |" not in kept  # a heading without amounts, a part
    # a metric whose line items the table does not state trims by words as before
    other = build_context(tree, dense, [], WIDE, focus=focus, items=operand_items("What is the quick ratio?"))[0]
    assert other.text == by_words


def test_a_line_items_row_is_the_one_with_fewest_words_its_label_lacks():
    from stages.core.plan.metrics import CAPEX, REVENUE
    from stages.core.retrieve.table_trim import line_rows

    cells = [["Net revenues:", "", ""], ["Product sales", "2,110", "2,255"],
             ["In-game, subscription, and other revenues", "4,907", "5,245"], ["Total net revenues", "7,017", "7,500"],
             ["Cost of revenues", "1,200", "1,300"]]
    assert line_rows(cells, [REVENUE]) == [3]  # a plural is the same word; a part of revenue is not its total
    assert line_rows(cells, [CAPEX, REVENUE]) == [3]  # no capex row here: only revenue's


def test_revenue_cost_and_depreciation_lines_are_no_capex_lines_and_far_names_are_other_lines():
    from stages.core.plan.metrics import CAPEX
    from stages.core.retrieve.table_trim import line_rows

    cells = [["Wireless equipment revenues", "27,210", "23,164"], ["Cost of wireless equipment", "30,496", "25,067"],
             ["Depreciation and amortization of property and equipment", "17,099", "16,206"],
             ["Capital expenditures (including capitalized software)", "23,087", "20,286"]]
    assert line_rows(cells, [CAPEX]) == [3]
    assert line_rows(cells[:3], [CAPEX]) == []
    far = [["Property and equipment of the discontinued European wireless segment", "12", "14"]]  # 4 more words
    assert line_rows(far, [CAPEX]) == []


def test_a_header_split_into_the_body_stays_with_the_line_items_rows():
    from stages.core.plan.metrics import NET_INCOME, REVENUE
    from stages.core.retrieve.table_trim import line_rows, period_rows

    cells = [["Fiscal Years Ended January 28, 2017 January 30, 2016 January", "", "31,", "2015"],
             ["Revenue", "39,403", "39,528", "40,339"], ["Gross profit", "9,440", "9,191", "9,047"],
             ["Net earnings", "1,228", "897", "1,233"], ["Restated in 2016", "12", "", ""]]
    assert period_rows(cells) == [0]  # the years above the first amount; none below it
    assert line_rows(cells, [NET_INCOME, REVENUE]) == [3, 1]
    # net income is the bottom line: the continuing operations' part of it is another line
    assert line_rows([["Net earnings from continuing operations", "1,207", "807"]], [NET_INCOME]) == []
    assert period_rows([["2022", "2021"], ["Revenue", "17,606", "15,785"]]) == [0]
    assert period_rows([["Revenue", "17,606", "15,785"]]) == []
