"""Evidence recall's test of one context (stages/core/retrieve/metrics.py)."""
from __future__ import annotations

import polars as pl

from stages.core.retrieve.metrics import evidence_found, retrieval_metrics

CONTEXT = ("Furthermore, between traditional and highly optimized hyperscale data centers, power usage "
           "effectiveness (PUE) has a stark difference – more than 40% higher efficiency for hyperscale "
           "data centers (Figure 1). The total energy amounted to a staggering 13.8 MWh.")


def test_the_value_in_a_printed_spelling_is_evidence():
    assert evidence_found("13.8", "", CONTEXT)
    assert evidence_found("13800", "", "it used 13,800 kWh")
    assert not evidence_found("13.9", "", CONTEXT)
    assert not evidence_found("1", "", "1 GPU")  # True/False answers say nothing by their digit


def test_most_of_the_quote_is_evidence():
    quote = '"power usage effectiveness (PUE) has a stark difference"'
    assert evidence_found("1", quote, CONTEXT)
    assert not evidence_found("1", '"water usage effectiveness of colocation sites in Virginia"', CONTEXT)


def test_words_next_to_an_elision_mark_count_as_found():
    # the annotators' "…" glued to a word ("…between", "centers…") hid the word from the count:
    # 3 of 5 content words found (0.6) only once the mark is split off
    quote = '"…hyperscale centers… stark Iowa datacenter"'
    assert evidence_found("1", quote, CONTEXT)
    assert not evidence_found("1", '"…hyperscale Iowa datacenter Oregon"', CONTEXT)


def test_recalls_leave_out_unanswerable_questions():
    labels = pl.DataFrame({"id": ["a", "b", "c"], "answer_value": ["13.8", "7", "is_blank"],
                           "ref_id": ["['dodge2022']", "['x']", "is_blank"], "supporting_materials": ["", "", ""]})
    ctx = pl.DataFrame({"question_id": ["a", "b", "c"], "doc_id": ["dodge2022", "dodge2022", "dodge2022"],
                        "text": [CONTEXT] * 3, "n_tokens": [10, 20, 30]})
    m = retrieval_metrics(labels, ctx)
    assert m["answerable_questions"] == 2
    assert m["gold_doc_recall"] == 0.5 and m["evidence_recall"] == 0.5
    assert m["mean_context_tokens"] == 20.0
