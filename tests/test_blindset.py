"""The blind evaluation set (data/wattbot/blind_QA.csv) and the checks that keep it honest.

The file is written from randomly drawn corpus passages (bench/draw_blind_passages.py) by
someone who saw neither the answering code nor its outputs; whoever changes the reader only
sees its aggregate score. These tests read its labels only to check them, never to tune.
"""
from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from bench.lib.devset import NA_ANSWER, check_file, kind, max_overlap, read_rows

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "wattbot"
BLIND = DATA / "blind_QA.csv"
CORPUS = DATA / "corpus"
TEST_Q = DATA / "test_Q.csv"


@pytest.fixture(scope="module")
def rows() -> list[dict[str, str]]:
    return [r.data for r in read_rows(BLIND)]


def test_check_file_finds_no_problems() -> None:
    """Quotes occur in the cited documents, values follow from them, no test_Q echo."""
    assert check_file(BLIND, CORPUS, TEST_Q) == []


def test_ids_unique_blind_and_not_used_elsewhere(rows: list[dict[str, str]]) -> None:
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"b\d{3}", i) for i in ids), "ids are b001..bNNN"
    others: set[str] = set()
    for path in DATA.glob("*_QA.csv"):
        if path.resolve() == BLIND.resolve():
            continue
        with open(path, newline="", encoding="utf-8-sig") as f:
            others |= {r["id"] for r in csv.DictReader(f)}
    assert not set(ids) & others


def test_size_and_mix(rows: list[dict[str, str]]) -> None:
    n = len(rows)
    assert n >= 140
    kinds = [kind(r) for r in rows]
    assert kinds.count("na") >= 8
    assert kinds.count("true_false") >= 12
    expl = [r["explanation"] for r in rows]
    assert sum(1 for e in expl if re.search(r"\bTable\b", e)) >= 20
    assert sum(1 for e in expl if re.search(r"\bFigure\b", e)) >= 10
    assert sum(1 for e in expl if e.strip().lower().startswith("math:")) >= 10
    assert kinds.count("numeric") + kinds.count("range") >= 0.6 * n  # about two thirds numeric


def test_true_false_lean_false(rows: list[dict[str, str]]) -> None:
    tf = [r for r in rows if kind(r) == "true_false"]
    assert all(r["answer"] in ("TRUE", "FALSE") for r in tf)
    assert all((r["answer"] == "TRUE") == (r["answer_value"] == "1") for r in tf)
    assert sum(r["answer"] == "FALSE" for r in tf) >= len(tf) / 2


def test_unanswerable_rows_are_blank(rows: list[dict[str, str]]) -> None:
    for r in rows:
        if kind(r) == "na":
            assert r["answer"] == NA_ANSWER
            for col in ("ref_id", "ref_url", "supporting_materials", "explanation"):
                assert r[col] == "is_blank", (r["id"], col)


def test_questions_do_not_echo_each_other(rows: list[dict[str, str]]) -> None:
    """Each question comes from its own passage: no two are near-copies."""
    qs = [r["question"] for r in rows]
    for i, q in enumerate(qs):
        j, other = max_overlap(q, qs[:i] + qs[i + 1:])
        assert j < 0.8, (rows[i]["id"], other)
