"""Cross-query rerank, context expansion, tree dedup, fusion and the token budget."""
from __future__ import annotations

import polars as pl
import pytest

from stages.core.common.params import ParamError
from stages.core.index.keywords import tokenize
from stages.core.retrieve.params import RetrieveParams
from stages.core.retrieve.ranking import build_context, count_tokens, rerank
from stages.core.tree.navigate import TreeView, is_ancestor


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
    ranked = rerank(per_query, "frequency", 0.5)
    assert [(h.node_id, h.frequency) for h in ranked] == [("a", 3), ("c", 1), ("b", 1)]
    assert ranked[0].score == pytest.approx(1.2)


def test_score_and_combined_rerank_orders():
    per_query = [[("a", 0.5), ("b", 0.9)], [("a", 0.45)]]
    assert [h.node_id for h in rerank(per_query, "score", 0.5)] == ["a", "b"]  # 0.95 > 0.9
    # alpha=0: pure min-max score; alpha=1: pure frequency
    assert [h.node_id for h in rerank([[("a", 0.2), ("b", 0.9)], [("a", 0.1)]], "combined", 0.0)] == ["b", "a"]
    assert [h.node_id for h in rerank([[("a", 0.2), ("b", 0.9)], [("a", 0.1)]], "combined", 1.0)] == ["a", "b"]


def test_sentence_expands_to_sibling_window_and_windows_merge():
    tree = make_tree()
    p = RetrieveParams(siblings=1, bm25_k=0, fusion="append", max_context_tokens=10_000)
    units = build_context(tree, [[("d:sec1:p1:s2", 0.9), ("d:sec1:p1:s3", 0.8)]], [], p)
    assert len(units) == 1
    assert units[0].node_ids == ["d:sec1:p1:s1", "d:sec1:p1:s2", "d:sec1:p1:s3", "d:sec1:p1:s4"]
    assert units[0].text == "Alpha one. Alpha two. Alpha three. Alpha four."


def test_tree_dedup_drops_descendants_of_included_paragraph():
    tree = make_tree()
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", max_context_tokens=10_000)
    units = build_context(tree, [[("d:sec1:p2:s1", 0.9), ("d:sec1:p2", 0.8), ("d:sec1:p3:s1", 0.7)]], [], p)
    assert [u.key for u in units] == ["d:sec1:p2", "d:sec1:p3:s1"]
    assert units[0].text == "Beta one. Beta two."
    assert not any(is_ancestor(a.key, b.key) for a in units for b in units)


def test_bm25_append_and_rrf_fusion():
    tree = make_tree()
    dense = [[("d:sec1:p1:s1", 0.9)]]
    kw = [(["d:sec1:p3"], 7.0), (["d:sec1:p1"], 3.0)]
    app = build_context(tree, dense, kw, RetrieveParams(siblings=0, fusion="append", max_context_tokens=10_000))
    # p1 (bm25) contains the dense sentence: merged into one unit, found by both
    assert [u.key for u in app] == ["d:sec1:p1", "d:sec1:p3"]
    assert app[0].source == "both"
    rrf = build_context(tree, dense, kw, RetrieveParams(siblings=0, fusion="rrf", max_context_tokens=10_000,
                                                        bm25_weight=1.0))
    assert [u.key for u in rrf] == ["d:sec1:p1", "d:sec1:p3"]
    assert rrf[0].score == pytest.approx(1 / 61 + 1 / 62)  # unweighted: dense rank 1 + bm25 rank 2


def test_bm25_sentence_window_hit_becomes_one_unit_and_merges_with_dense_window():
    tree = make_tree()
    kw = [(["d:sec1:p1:s3", "d:sec1:p1:s4"], 5.0), (["d:sec1:p3"], 2.0)]
    units = build_context(tree, [[("d:sec1:p1:s1", 0.9)]], kw,
                          RetrieveParams(siblings=1, fusion="append", max_context_tokens=10_000))
    # dense window s1..s2 and the BM25 window s3..s4 touch: one unit s1..s4, found by both
    assert units[0].node_ids == ["d:sec1:p1:s1", "d:sec1:p1:s2", "d:sec1:p1:s3", "d:sec1:p1:s4"]
    assert units[0].text == "Alpha one. Alpha two. Alpha three. Alpha four."
    assert units[0].source == "both"
    assert [u.key for u in units[1:]] == ["d:sec1:p3"]


def test_budget_drops_lowest_ranked_units_first():
    tree = make_tree()
    dense = [[("d:sec1:p3:s1", 0.9), ("d:sec1:p2", 0.8), ("d:sec1:p1", 0.7)]]
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", max_context_tokens=9, chars_per_token=4.0)
    units = build_context(tree, dense, [], p)
    assert [u.key for u in units] == ["d:sec1:p3:s1", "d:sec1:p2"]
    assert sum(u.n_tokens for u in units) <= 9
    assert count_tokens("Beta one. Beta two.", 4.0) == 5


def test_fill_skip_passes_over_a_unit_too_long_for_what_is_left_of_the_budget():
    tree = make_tree()
    # p3:s1 (3 tokens), then p1 (16 tokens) does not fit a budget of 9; p2 (5 tokens) after it does
    dense = [[("d:sec1:p3:s1", 0.9), ("d:sec1:p1", 0.8), ("d:sec1:p2", 0.7)]]
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", max_context_tokens=9, chars_per_token=4.0)
    assert [u.key for u in build_context(tree, dense, [], p)] == ["d:sec1:p3:s1"]
    skip = RetrieveParams(**{**p.__dict__, "fill": "skip"})
    units = build_context(tree, dense, [], skip)
    assert [u.key for u in units] == ["d:sec1:p3:s1", "d:sec1:p2"]
    assert sum(u.n_tokens for u in units) <= 9


def test_trim_keeps_the_sentences_richest_in_question_keywords():
    tree = make_tree()
    dense = [[("d:sec1:p1", 0.9), ("d:sec1:p3:s1", 0.8)]]
    focus = {t: 1.0 for t in tokenize("alpha four")} | {t: 3.0 for t in tokenize("four")}
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", max_context_tokens=10_000, trim_tokens=8)
    units = build_context(tree, dense, [], p, focus=focus)
    # p1 (5 sentences, 17 tokens) is cut to the window of <= 8 tokens around "Alpha four."
    assert units[0].node_ids[0] != "d:sec1:p1" and "d:sec1:p1:s4" in units[0].node_ids
    assert "Alpha four." in units[0].text and count_tokens(units[0].text, 4.0) <= 8
    assert units[1].text == "Gamma one."  # short units stay whole
    off = build_context(tree, dense, [], RetrieveParams(**{**p.__dict__, "trim_tokens": 0}), focus=focus)
    assert off[0].text == "Alpha one. Alpha two. Alpha three. Alpha four. Alpha five."
    # no keyword in common: the unit stays whole rather than cut at random
    none = build_context(tree, dense, [], p, focus={t: 1.0 for t in tokenize("zeta")})
    assert none[0].node_ids == ["d:sec1:p1"]


def test_coverage_prefers_a_unit_that_adds_a_question_keyword_the_chosen_units_lack():
    tree = make_tree()
    # scores: Alpha 0.9, Beta 0.85, Gamma 0.8; the budget holds two of the three sentences
    dense = [[("d:sec1:p1:s1", 0.9), ("d:sec1:p2:s1", 0.85), ("d:sec1:p3:s1", 0.8)]]
    focus = {t: 1.0 for t in tokenize("alpha gamma")}
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", rerank="score", max_context_tokens=6)
    assert [u.key for u in build_context(tree, dense, [], p, focus=focus)] == ["d:sec1:p1:s1", "d:sec1:p2:s1"]
    # Gamma adds the keyword Alpha lacks: 0.8/0.9 + 1.0 x 1/2 beats Beta's 0.85/0.9 + 0
    cov = RetrieveParams(**{**p.__dict__, "coverage": 1.0})
    assert [u.key for u in build_context(tree, dense, [], cov, focus=focus)] == ["d:sec1:p1:s1", "d:sec1:p3:s1"]
    # a small weight does not outweigh the score gap
    weak = RetrieveParams(**{**p.__dict__, "coverage": 0.1})
    assert [u.key for u in build_context(tree, dense, [], weak, focus=focus)] == ["d:sec1:p1:s1", "d:sec1:p2:s1"]
    with pytest.raises(ParamError, match="retrieve.coverage"):
        RetrieveParams(coverage=-1.0).validate()


def test_coverage_fused_layout_keeps_the_top_unit_and_shows_the_chosen_units_in_score_order():
    tree = make_tree()
    # sentence units, by score: Alpha one, Beta one, Alpha three, Gamma one
    dense = [[("d:sec1:p1:s1", 0.9), ("d:sec1:p2:s1", 0.85), ("d:sec1:p1:s3", 0.8), ("d:sec1:p3:s1", 0.75)]]
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", rerank="score", max_context_tokens=9, coverage=1.0)
    greedy = RetrieveParams(**{**p.__dict__, "coverage_layout": "greedy"})

    def keys(params: RetrieveParams, question: str) -> list[str]:
        focus = {t: 1.0 for t in tokenize(question)}
        return [u.key for u in build_context(tree, dense, [], params, focus=focus)]

    # after Alpha one, Gamma adds "gamma" (0.75/0.9 + 1/2) and beats Beta; the reader still sees Beta before Gamma
    assert keys(greedy, "alpha gamma") == ["d:sec1:p1:s1", "d:sec1:p3:s1", "d:sec1:p2:s1"]
    assert keys(p, "alpha gamma") == ["d:sec1:p1:s1", "d:sec1:p2:s1", "d:sec1:p3:s1"]
    # Alpha one names no keyword: greedy drops it from the two places, fused keeps it first
    two = {"max_context_tokens": 6}
    assert keys(RetrieveParams(**{**greedy.__dict__, **two}), "beta gamma") == ["d:sec1:p2:s1", "d:sec1:p3:s1"]
    assert keys(RetrieveParams(**{**p.__dict__, **two}), "beta gamma") == ["d:sec1:p1:s1", "d:sec1:p2:s1"]
    with pytest.raises(ParamError, match="retrieve.coverage_layout"):
        RetrieveParams(coverage_layout="random").validate()  # type: ignore[arg-type]


def test_top_k_final_caps_units():
    tree = make_tree()
    dense = [[("d:sec1:p3:s1", 0.9), ("d:sec1:p2", 0.8), ("d:sec1:p1", 0.7)]]
    units = build_context(tree, dense, [], RetrieveParams(siblings=0, bm25_k=0, top_k_final=2, fusion="append"))
    assert len(units) == 2


def test_retry_context_keeps_previous_units_first_and_adds_new_ones():
    from stages.core.retrieve.ranking import extend_context

    tree = make_tree()
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", max_context_tokens=10_000)
    first = build_context(tree, [[("d:sec1:p3:s1", 0.9)]], [], p)
    wider = build_context(tree, [[("d:sec1:p2", 0.95), ("d:sec1:p3:s1", 0.9), ("d:sec1:p1:s1", 0.5)]], [], p)
    ext = extend_context(first, wider, p)
    assert [u.key for u in ext] == ["d:sec1:p3:s1", "d:sec1:p2", "d:sec1:p1:s1"]
    assert ext[0] is first[0]


# --- denser context: answer-unit boost and table blocks ---------------------------------

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
    from stages.core.retrieve.ranking import unit_pattern

    assert unit_pattern("is_blank") is None and unit_pattern(None) is None and unit_pattern("") is None
    pct = unit_pattern("percent")
    assert pct.search("rose by 40%") and pct.search("40 percent")
    watt = unit_pattern("W")
    assert watt.search("300 W on average") and watt.search("Power (W): 517.66")
    assert not watt.search("5 kW") and not watt.search("We trained")  # not inside kW, not the capital of a word
    usd = unit_pattern("USD per hour")
    assert usd.search("$3.06") and usd.search("costs 12 dollars") and usd.search("per hour")
    assert unit_pattern("multiplier").search("a 3x gain")


def test_holds_unit_in_prose_and_table_rows():
    from stages.core.retrieve.ranking import RetrievedUnit, holds_unit, unit_pattern

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
    p = RetrieveParams(bm25_k=2, fusion="rrf", max_context_tokens=10_000, unit_boost=0.0)
    assert [u.key for u in build_context(tree, [], kw, p, "W")] == ["d:sec1:p1", "d:sec1:p2"]  # 0 = off
    boosted = RetrieveParams(bm25_k=2, fusion="rrf", max_context_tokens=10_000, unit_boost=0.5, unit_family=False)
    assert [u.key for u in build_context(tree, [], kw, boosted, "W")] == ["d:sec1:p2", "d:sec1:p1"]
    # no unit (names, True/False) or a unit the text does not state: the fused order stands
    assert [u.key for u in build_context(tree, [], kw, boosted, "is_blank")] == ["d:sec1:p1", "d:sec1:p2"]
    assert [u.key for u in build_context(tree, [], kw, boosted, "liters")] == ["d:sec1:p1", "d:sec1:p2"]

    # unit_family: a number in any unit of the answer unit's family counts ("watts" for a question in kW),
    # but not single letters ("300 W"): "s", "h", "g", "t", "L" stand for too much else
    family = RetrieveParams(bm25_k=2, fusion="rrf", max_context_tokens=10_000, unit_boost=0.5, unit_family=True)
    assert [u.key for u in build_context(tree, [], kw, boosted, "MWh")] == ["d:sec1:p1", "d:sec1:p2"]
    assert [u.key for u in build_context(tree, [], kw, family, "kW")] == ["d:sec1:p1", "d:sec1:p2"]
    with_watts = make_table_tree(power="300 watts")
    assert [u.key for u in build_context(with_watts, [], kw, boosted, "kW")] == ["d:sec1:p1", "d:sec1:p2"]
    assert [u.key for u in build_context(with_watts, [], kw, family, "kW")] == ["d:sec1:p2", "d:sec1:p1"]


def test_unit_family_spellings():
    from stages.core.index.vocab import unit_family_spellings
    from stages.core.retrieve.ranking import unit_pattern

    assert {"kWh", "MWh", "TWh", "joules"} <= unit_family_spellings("GWh")
    assert {"hours", "minutes", "years"} <= unit_family_spellings("days") and "km" not in unit_family_spellings("days")
    assert {"kg", "lbs"} <= unit_family_spellings("tCO2e")  # the leading word of a CO2 unit
    assert unit_family_spellings("USD") == set() and unit_family_spellings("L/kWh") == set()
    km = unit_pattern("km", family=True)
    assert km.search("logged 1,500,000 miles") and not unit_pattern("km").search("logged 1,500,000 miles")


def test_table_blocks_merge_rows_of_one_table_with_caption_and_header_once():
    tree = make_table_tree()
    kw = [(["d:sec1:p3:s3"], 9.0), (["d:sec1:p1"], 8.0), (["d:sec1:p3:s1"], 7.0)]
    off = build_context(tree, [], kw, RetrieveParams(bm25_k=3, max_context_tokens=10_000))
    assert [u.key for u in off] == ["d:sec1:p3:s3", "d:sec1:p1", "d:sec1:p3:s1"]
    assert sum("Table 3" in u.text for u in off) == 2  # each row repeats the caption
    on = build_context(tree, [], kw, RetrieveParams(bm25_k=3, max_context_tokens=10_000, table_blocks=True))
    assert [u.key for u in on] == ["d:sec1:p3:s3", "d:sec1:p1"]  # the block keeps its best row's rank and key
    block = on[0]
    assert block.node_ids == ["d:sec1:p3:s1", "d:sec1:p3:s3"]  # rows in table order
    assert block.text == ("Table 3: Power of common models.\n| Model | Power (W) | Hours |\n"
                          "| ELMo | 517.66 | 336 |\n| GPT-2 | 1,516 | 168 |")
    assert block.n_tokens == count_tokens(block.text, 4.0)
    assert sum(u.n_tokens for u in on) < sum(u.n_tokens for u in off)


def test_table_block_row_joins_only_if_the_budget_allows_and_takes_no_place():
    tree = make_table_tree()
    kw = [(["d:sec1:p3:s1"], 9.0), (["d:sec1:p3:s3"], 7.0)]
    # top_k_final=1: a later row joins the first row's block without a place of its own
    one = build_context(tree, [], kw, RetrieveParams(bm25_k=2, top_k_final=1, max_context_tokens=10_000,
                                                     table_blocks=True))
    assert len(one) == 1 and one[0].node_ids == ["d:sec1:p3:s1", "d:sec1:p3:s3"]
    block = count_tokens("Table 3: Power of common models.\n| Model | Power (W) | Hours |\n"
                         "| ELMo | 517.66 | 336 |\n| GPT-2 | 1,516 | 168 |", 4.0)
    assert [len(u.node_ids) for u in build_context(
        tree, [], kw, RetrieveParams(bm25_k=2, max_context_tokens=block, table_blocks=True))] == [2]
    # one token short of the block: the first row stays alone (as its row sentence)
    cut = build_context(tree, [], kw, RetrieveParams(bm25_k=2, max_context_tokens=block - 1, table_blocks=True))
    assert [u.node_ids for u in cut] == [["d:sec1:p3:s1"]] and cut[0].text == tree["d:sec1:p3:s1"].text


def test_table_blocks_render_neighbouring_rows_merged_as_a_window():
    tree = make_table_tree()
    kw = [(["d:sec1:p3:s1"], 9.0), (["d:sec1:p3:s2"], 8.0)]  # touching rows: one unit before the budget
    off = build_context(tree, [], kw, RetrieveParams(bm25_k=2, max_context_tokens=10_000))
    assert len(off) == 1 and off[0].text.count("Table 3") == 2
    on = build_context(tree, [], kw, RetrieveParams(bm25_k=2, max_context_tokens=10_000, table_blocks=True))
    assert on[0].text == ("Table 3: Power of common models.\n| Model | Power (W) | Hours |\n"
                          "| ELMo | 517.66 | 336 |\n| BERT | 12,041 | 79 |")


def test_digit_aware_token_estimate():
    assert count_tokens("abcdefgh", 4.0) == 2 and count_tokens("abcdefgh", 4.0, 1.5) == 2
    assert count_tokens("12345678", 4.0) == 2
    assert count_tokens("12345678", 4.0, 1.5) == 12  # every digit is a token of its own (and more)
    assert count_tokens("ab 1234", 4.0, 1.0) == 5  # 3 other characters (1 token) + 4 digits
    with pytest.raises(Exception, match="tokens_per_digit"):
        RetrieveParams(tokens_per_digit=-1).validate()


def test_table_trim_keeps_caption_header_and_the_rows_the_question_names():
    tree = make_table_tree()
    dense = [[("d:sec1:p3", 0.9), ("d:sec1:p1", 0.8)]]
    focus = {t: 2.0 for t in tokenize("BERT")} | {t: 0.5 for t in tokenize("power")}
    whole = build_context(tree, dense, [], RetrieveParams(siblings=0, bm25_k=0, fusion="append",
                                                          max_context_tokens=10_000), focus=focus)
    assert whole[0].node_ids == ["d:sec1:p3"] and "ELMo" in whole[0].text
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", max_context_tokens=10_000, trim_table_tokens=20)
    units = build_context(tree, dense, [], p, focus=focus)
    assert units[0].node_ids == ["d:sec1:p3:s2"]  # the BERT row, as a row of its table
    assert units[0].text == ("Table 3: Power of common models.\n| Model | Power (W) | Hours |\n"
                             "| BERT | 12,041 | 79 |")
    assert units[1].text == whole[1].text  # prose is trim_tokens' business
    # a budget that holds two rows keeps the best two, in table order
    two = build_context(tree, dense, [], RetrieveParams(**{**p.__dict__, "trim_table_tokens": 30}),
                        focus=focus | {t: 1.0 for t in tokenize("ELMo")})
    assert two[0].node_ids == ["d:sec1:p3:s1", "d:sec1:p3:s2"]
    # no row named more than another: the table stays whole
    same = build_context(tree, dense, [], p, focus={t: 1.0 for t in tokenize("power")})
    assert same[0].node_ids == ["d:sec1:p3"]
    # a table within the limit stays whole
    big = build_context(tree, dense, [], RetrieveParams(**{**p.__dict__, "trim_table_tokens": 10_000}), focus=focus)
    assert big[0].node_ids == ["d:sec1:p3"]


def test_table_trim_ties_keep_every_row_as_rich_as_the_best():
    """retrieve.trim_table_ties: rows the question's keywords cannot tell from the best row
    (a model's before and after rows) stay together past trim_table_tokens; a tie further down does not."""
    tree = make_table_tree()
    dense = [[("d:sec1:p3", 0.9)]]
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", max_context_tokens=10_000, trim_table_tokens=20,
                       trim_table_ties=False)
    two_best = {t: 2.0 for t in tokenize("ELMo BERT")}
    assert build_context(tree, dense, [], p, focus=two_best)[0].node_ids == ["d:sec1:p3:s1"]
    ties = RetrieveParams(**{**p.__dict__, "trim_table_ties": True})
    assert build_context(tree, dense, [], ties, focus=two_best)[0].node_ids == ["d:sec1:p3:s1", "d:sec1:p3:s2"]
    one_best = {t: 2.0 for t in tokenize("BERT")} | {t: 1.0 for t in tokenize("ELMo GPT")}
    assert build_context(tree, dense, [], ties, focus=one_best)[0].node_ids == ["d:sec1:p3:s2"]


def test_table_trim_groups_keep_the_best_rows_namesakes_in_other_row_groups():
    """retrieve.trim_table_groups: "Qwen (After optimization)" is the best row, and the "Qwen" row of the
    group above it joins it past trim_table_tokens (a change between the groups needs both); other rows do not."""
    md = ("Table 3: Carbon per inference.\n| Model | CO2 (kg) |\n|---|---|\n| Llama | 0.012 |\n| Qwen | 0.009 |\n"
          "| Llama (After optimization) | 0.005 |\n| Qwen (After optimization) | 0.004 |")
    tree = make_table_tree(md)
    dense = [[("d:sec1:p3", 0.9)]]
    focus = {t: 2.0 for t in tokenize("Qwen")} | {t: 1.0 for t in tokenize("after optimization")}
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", max_context_tokens=10_000, trim_table_tokens=20,
                       trim_table_groups=False)
    assert build_context(tree, dense, [], p, focus=focus)[0].node_ids == ["d:sec1:p3:s4"]
    groups = RetrieveParams(**{**p.__dict__, "trim_table_groups": True})
    kept = build_context(tree, dense, [], groups, focus=focus)[0]
    assert kept.node_ids == ["d:sec1:p3:s2", "d:sec1:p3:s4"]
    assert "| Qwen | 0.009 |" in kept.text and "Llama" not in kept.text


def test_table_trim_cover_adds_the_row_with_question_keywords_no_kept_row_has():
    """retrieve.trim_table_cover: a sum of "training plus finetuning energy" keeps the finetuning row
    (richest in keywords) and the training row (brings "training"), not the row that adds nothing."""
    from stages.core.retrieve.ranking import covering_rows

    md = ("Table 5: Energy of the models.\n| | M7 | M3 |\n|---|---|---|\n| Training energy (kWh) | 51,686 | 25,497 |\n"
          "| Finetuning energy (kWh) | 7,571 | 3,242 |\n| Inference energy (kWh) | 0.0001 | 0.00007 |")
    tree = make_table_tree(md)
    dense = [[("d:sec1:p3", 0.9)]]
    focus = {t: 2.0 for t in tokenize("finetuning")} | {t: 1.0 for t in tokenize("training energy")}
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", max_context_tokens=10_000, trim_table_tokens=20)
    assert build_context(tree, dense, [], p, focus=focus)[0].node_ids == ["d:sec1:p3:s2"]
    cover = RetrieveParams(**{**p.__dict__, "trim_table_cover": 2})
    kept = build_context(tree, dense, [], cover, focus=focus)[0]
    assert kept.node_ids == ["d:sec1:p3:s1", "d:sec1:p3:s2"]  # "Inference energy" adds no new keyword
    assert "51,686" in kept.text and "0.0001" not in kept.text
    rows = ["Training energy", "Finetuning energy", "Inference energy"]
    assert covering_rows(rows, [1], focus, 0) == []
    assert covering_rows(rows, [0, 1], focus, 1) == []  # everything asked is covered


def test_table_trim_unit_keeps_the_row_that_names_the_answer_unit():
    """retrieve.trim_table_unit: in a table with one column per model, the row whose name writes the
    question's answer unit in brackets is kept before rows richer in question keywords."""
    from stages.core.retrieve.ranking import labels_unit, unit_pattern

    assert labels_unit("Cost parity (# inferences)", unit_pattern("inferences"))
    assert labels_unit("Energy [kWh]", unit_pattern("kWh")) and not labels_unit("Energy (kWh)", unit_pattern("MWh"))
    assert not labels_unit("inferences per second", unit_pattern("inferences"))  # not in brackets
    md = ("Table 5: Energy of the models.\n| | M7 | M3 |\n|---|---|---|\n| Training energy (kWh) | 51,686 | 25,497 |\n"
          "| Finetuning energy (kWh) | 7,571 | 3,242 |\n| Cost parity (# inferences) | 592,570,000 | 395,602,740 |")
    tree = make_table_tree(md)
    dense = [[("d:sec1:p3", 0.9)]]
    focus = {t: 2.0 for t in tokenize("finetuning energy")} | {t: 0.5 for t in tokenize("inferences")}
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", max_context_tokens=10_000, trim_table_tokens=25,
                       trim_table_unit=False)
    assert build_context(tree, dense, [], p, "inferences", focus=focus)[0].node_ids == ["d:sec1:p3:s2"]
    on = RetrieveParams(**{**p.__dict__, "trim_table_unit": True})
    assert build_context(tree, dense, [], on, "inferences", focus=focus)[0].node_ids == ["d:sec1:p3:s3"]
    assert build_context(tree, dense, [], on, None, focus=focus)[0].node_ids == ["d:sec1:p3:s2"]  # no unit asked


def test_table_trim_reads_a_row_named_by_an_abbreviation_as_the_words_it_stands_for():
    """retrieve.trim_table_abbreviations: 'P&R', defined in the caption as Pause and Resume, matches a
    question about Pause and Resume better than a row that shares one of those words."""
    md = ("Table 4. Gain of Flexible Start (FS) and Pause and Resume (P&R).\n| Model | BERT | ViT |\n|---|---|---|\n"
          "| FS | 14.5% | 3.4% |\n| P&R | 19.0% | 8.5% |\n| Pauses / hr | 0.23 | 0.3 |")
    tree = make_table_tree(md)
    dense = [[("d:sec1:p3", 0.9)]]
    focus = {t: 1.0 for t in tokenize("pause resume")}
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", max_context_tokens=10_000, trim_table_tokens=20,
                       trim_table_abbreviations=False)
    assert build_context(tree, dense, [], p, focus=focus)[0].node_ids == ["d:sec1:p3:s3"]
    on = RetrieveParams(**{**p.__dict__, "trim_table_abbreviations": True})
    assert build_context(tree, dense, [], on, focus=focus)[0].node_ids == ["d:sec1:p3:s2"]


def test_table_trim_quoted_keeps_the_row_whose_name_the_question_writes():
    """retrieve.trim_table_quoted: "the geometric mean of the manufacturing-cost and equivalent-GPU-price
    approaches" shares more keywords with the "Price of equivalent GPU" row than with "Geometric mean",
    the row it names word for word (cottier2024 Table 3)."""
    from stages.core.retrieve.ranking import quotes_name

    md = ("Table 3: Cost of TPUs.\n| | TPU v3 | TPU v4 |\n|---|---|---|\n"
          "| Chip manufacturing cost (estimate) | $2,591 | $2,203 |\n"
          "| Price of equivalent GPU (estimate) | $10,742 | $12,119 |\n| Geometric mean | $5,276 | $5,176 |")
    tree = make_table_tree(md)
    dense = [[("d:sec1:p3", 0.9)]]
    question = ("What per-chip cost do Cottier et al. estimate for TPU v4 as the geometric mean of the "
                "manufacturing-cost and equivalent-GPU-price approaches?")
    focus = {t: 1.0 for t in tokenize("geometric mean manufacturing cost equivalent gpu price estimate")}
    p = RetrieveParams(siblings=0, bm25_k=0, fusion="append", max_context_tokens=10_000, trim_table_tokens=20,
                       trim_table_quoted=False)
    assert build_context(tree, dense, [], p, focus=focus, question=question)[0].node_ids == ["d:sec1:p3:s2"]
    quoted = RetrieveParams(**{**p.__dict__, "trim_table_quoted": True})
    kept = build_context(tree, dense, [], quoted, focus=focus, question=question)[0]
    assert kept.node_ids[0] == "d:sec1:p3:s3" and "$5,176" in kept.text
    assert quotes_name(question, "Geometric mean")
    assert not quotes_name(question, "Price of equivalent GPU (estimate)")  # its words, not in its order
    assert not quotes_name("the mean energy", "Mean")  # one word is no name to quote
