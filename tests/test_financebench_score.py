"""bench/lib/financebench.py: FinanceBench answers by value, pages from 0-based evidence, the fixed subset."""
from __future__ import annotations

import polars as pl

from bench.lib.financebench import (judge_answers, line_item_names, line_item_recall, parse_number, recall,
                                   subset_docs, value_matches)


def test_numbers_are_read_with_their_rounding_and_percent():
    assert parse_number("$1,577.00") == (1577.0, 2, False)
    assert parse_number("1.9%") == (1.9, 1, True)
    assert parse_number("(5.2)") == (-5.2, 1, False)
    assert parse_number("No, the operating margins declined from 36.8% to 34.6%") is None
    gold = parse_number("$1577.00")
    assert gold is not None
    assert value_matches("1577", gold) and value_matches("1,580", gold)  # within 1%
    assert not value_matches("1600", gold) and not value_matches("is_blank", gold)
    small = parse_number("0.66")
    assert small is not None
    assert value_matches("0.664", small) and not value_matches("0.68", small)  # half a unit of the last decimal
    pct = parse_number("1.9%")
    assert pct is not None
    assert value_matches("0.019", pct) and value_matches("1.9", pct) and not value_matches("2.1", pct)


LABELS = [
    {"id": "q1", "answer": "$8.70", "question_type": "metrics-generated", "doc": "A",
     "evidence": [{"doc": "A", "page_0based": 4}]},
    {"id": "q2", "answer": "Yes, margins improved.", "question_type": "novel-generated", "doc": "B",
     "evidence": [{"doc": "B", "page_0based": 0}, {"doc": "B", "page_0based": 9}]},
    {"id": "q3", "answer": "12", "question_type": "domain-relevant", "doc": "A",
     "evidence": [{"doc": "A", "page_0based": 1}]},
]


def test_a_unit_covers_its_pages_and_the_gold_page_is_0based_plus_one():
    nodes = pl.DataFrame({"node_id": ["a1", "a2", "b1"], "page": [5, 2, 1], "page_end": [5, 3, 1]})
    units = pl.DataFrame({"question_id": ["q1", "q2", "q3"], "node_id": ["a1", "b1", "b1"],
                          "doc_id": ["A", "B", "B"], "page": [5, 1, 1]})
    r = recall(LABELS, units, nodes)
    assert r["per_question"]["q1"] == {"filing": True, "page_any": True, "page_all": True}  # page_0based 4 = page 5
    assert r["per_question"]["q2"] == {"filing": True, "page_any": True, "page_all": False}  # 1 of 2 pages
    assert r["per_question"]["q3"] == {"filing": False, "page_any": False, "page_all": False}  # another filing
    assert r["all"] == {"n": 3, "filing": 0.6667, "page_any": 0.6667, "page_all": 0.3333}
    # a unit running over a page break covers both pages
    span = recall(LABELS[2:], pl.DataFrame({"question_id": ["q3"], "node_id": ["a2"], "doc_id": ["A"],
                                            "page": [None]}, schema_overrides={"page": pl.Int64}), nodes)
    assert span["all"]["page_any"] == 1.0


def test_answers_by_value_refusals_apart_text_for_hand_judging():
    sub = pl.DataFrame({"id": ["q1", "q2", "q3"], "answer_value": ["8.7", "1", "is_blank"],
                        "answer": ["8.7", "Yes", ""], "ref_id": ["['A']", "['B']", "['A']"]})
    j = judge_answers(LABELS, sub)
    c = j["counts"]["all"]
    assert (c["n"], c["numeric_right"], c["refused"], c["text_to_judge"], c["cites_gold_filing"]) == (3, 1, 1, 1, 3)
    assert [r["id"] for r in j["to_judge_by_hand"]] == ["q2"]


def test_the_subset_is_fixed_and_independent_of_order():
    ids = [f"DOC_{i}" for i in range(30)]
    assert subset_docs(ids, 5) == subset_docs(list(reversed(ids)), 5)
    assert len(subset_docs(ids, 5)) == 5 and subset_docs(ids, 0) == sorted(ids)


def test_the_line_items_a_justification_names_are_looked_for_in_the_context():
    one = "The line item name, as seen in the 10K, was: Purchases of property, plant and equipment (PP&E)."
    two = ("Metric 1: Cash from operations. This metric was located in the 10K as a single line item named: Net cash "
           "provided by operating activities.  Metric 2: Total current liabilities. This metric was located in the "
           "10K as a single line item named: Total\u00c2\u00a0current liabilities. ")
    assert line_item_names(one) == ["Purchases of property, plant and equipment"]
    assert line_item_names(two) == ["Net cash provided by operating activities", "Total\u00c2\u00a0current liabilities"]
    labels = [{"id": "q1", "question_type": "metrics-generated", "justification": one},
              {"id": "q2", "question_type": "metrics-generated", "justification": two},
              {"id": "q3", "question_type": "novel-generated", "justification": one}]
    units = pl.DataFrame({"question_id": ["q1", "q2", "q2"],
                          "text": ["Cash Flows | Purchases of property, plant and equipment | (1,577)",
                                   "Net cash provided by operating | activities 6,439", "Total liabilities 9"]})
    assert line_item_recall(labels, units) == {"n": 3, "found": round(2 / 3, 4)}
