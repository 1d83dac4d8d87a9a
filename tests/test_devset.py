"""The hand-written dev set (data/wattbot/dev_QA.csv) and the checks that keep it honest."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from bench.lib import devset
from bench.lib.devset import (
    COLUMNS,
    check_file,
    kind,
    max_overlap,
    normalise_text,
    read_rows,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "wattbot"
DEV = DATA / "dev_QA.csv"


@pytest.fixture(scope="module")
def dev_rows() -> list[dict[str, str]]:
    return [r.data for r in read_rows(DEV)]


def test_dev_set_size_and_mix(dev_rows: list[dict[str, str]]) -> None:
    kinds = [kind(r) for r in dev_rows]
    n = len(kinds)
    assert n >= 150
    assert kinds.count("numeric") + kinds.count("range") >= 0.6 * n  # about two thirds numeric, like test_Q
    assert 0.04 * n <= kinds.count("na") <= 0.10 * n  # ~6% unanswerable
    assert kinds.count("true_false") >= 15 and kinds.count("text") >= 10 and kinds.count("range") >= 10
    tf = [r["answer_value"] for r in dev_rows if kind(r) == "true_false"]
    assert tf.count("0") >= tf.count("1")  # False answers are where a small model leans wrong
    hard = [t for r in dev_rows for t in devset.hard_kinds(r)]
    for tag in ("table_value", "unit_conversion", "arithmetic", "magnitude_word", "named_paper"):
        assert hard.count(tag) >= 10, tag


def test_dev_ids_are_their_own(dev_rows: list[dict[str, str]]) -> None:
    """Dev ids never collide with train/test ids (q###), so results can be joined safely."""
    ids = [r["id"] for r in dev_rows]
    assert len(set(ids)) == len(ids)
    assert all(i.startswith("d") for i in ids)


def test_every_quote_value_and_overlap_check_passes() -> None:
    """Quotes occur in the cited documents, values follow from the quotes, no test_Q echo."""
    problems = check_file(DEV, DATA / "corpus", DATA / "test_Q.csv")
    assert problems == []


def test_the_table_questions_pass_the_same_checks_and_do_not_repeat_dev() -> None:
    """dev_tables_QA.csv (issue 25: questions on the kinds of tables that still failed) is held to dev's checks,
    and its ids and questions are its own."""
    tables = DATA / "dev_tables_QA.csv"
    assert check_file(tables, DATA / "corpus", DATA / "test_Q.csv") == []
    rows = [r.data for r in read_rows(tables)]
    dev = [r.data for r in read_rows(DEV)]
    assert len(rows) >= 15 and all(r["explanation"].lower().startswith("table") for r in rows)
    assert not {r["id"] for r in rows} & {r["id"] for r in dev}
    assert not {r["question"] for r in rows} & {r["question"] for r in dev}


def test_no_dev_question_echoes_a_test_question(dev_rows: list[dict[str, str]]) -> None:
    with open(DATA / "test_Q.csv", newline="", encoding="utf-8-sig") as f:
        tests = [r["question"] for r in csv.DictReader(f)]
    worst = max(max_overlap(r["question"], tests)[0] for r in dev_rows)
    assert worst < devset.MAX_TEST_OVERLAP


# --- the checker itself must be able to fail ------------------------------------

def _write(tmp_path: Path, rows: list[list[str]]) -> Path:
    p = tmp_path / "qa.csv"
    with open(p, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        w.writerows(rows)
    return p


def _corpus(tmp_path: Path) -> Path:
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "doc1.json").write_text('{"text": "Training used 24 MWh and pro-\\nduced 4.3 net tCO 2 e. '
                                 'The run cost 5.6 billion dollars. Table 1: Human life, avg, 1 year 11,023"}')
    return d


def test_checker_accepts_good_rows(tmp_path: Path) -> None:
    rows = [
        ["d1", "How much energy?", "24 MWh", "24", "MWh", "['doc1']", "['u']", "Training used 24 MWh", "Quote"],
        ["d2", "Energy in kWh?", "24000 kWh", "24000", "kWh", "['doc1']", "['u']", "Training used 24 MWh",
         "Math: 24 * 1000 = 24000"],
        ["d3", "Cost in USD?", "5.6 billion", "5600000000", "USD", "['doc1']", "['u']",
         "The run cost 5.6 billion dollars.", "Quote"],
        ["d4", "lbs for a life?", "11023 lbs", "11023", "lbs", "['doc1']", "['u']",
         "Table 1: ... Human life, avg, 1 year 11,023", "Table 1"],
        ["d5", "Emissions?", "4.3 tCO2e", "4.3", "tCO2e", "['doc1']", "['u']", "and produced 4.3 net tCO2e", "Quote"],
        ["d6", "Unknown?", devset.NA_ANSWER, "is_blank", "MWh", "is_blank", "is_blank", "is_blank", "is_blank"],
    ]
    assert check_file(_write(tmp_path, rows), _corpus(tmp_path), None) == []


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (["d1", "q?", "a", "24", "MWh", "['doc1']", "['u']", "Training used 25 MWh", "Quote"], "quote not found"),
        (["d1", "q?", "a", "25", "MWh", "['doc1']", "['u']", "Training used 24 MWh", "Quote"], "not a number"),
        (["d1", "q?", "a", "24", "MWh", "['nodoc']", "['u']", "Training used 24 MWh", "Quote"], "unknown documents"),
        (["d1", "q?", "a", "24", "is_blank", "['doc1']", "['u']", "Training used 24 MWh", "Quote"], "needs its unit"),
        (["d1", "q?", "a", "48", "MWh", "['doc1']", "['u']", "Training used 24 MWh", "Math: 24 * 3 = 48"],
         "= 72, not 48"),
        (["d1", "q?", "a", "48", "MWh", "['doc1']", "['u']", "Training used 24 MWh", "Math: 24 * 2.5 = 60"],
         "operand 2.5"),
        (["d1", "True or False: x", "a", "yes", "is_blank", "['doc1']", "['u']", "Training used 24 MWh", "Quote"],
         "must be 1 or 0"),
        (["d1", "q?", "a", "is_blank", "MWh", "['doc1']", "['u']", "is_blank", "is_blank"], "ref_id = is_blank"),
    ],
)
def test_checker_rejects_bad_rows(tmp_path: Path, row: list[str], message: str) -> None:
    problems = check_file(_write(tmp_path, [row]), _corpus(tmp_path), None)
    assert any(message in p for p in problems), problems


def test_checker_rejects_a_test_question_echo(tmp_path: Path) -> None:
    tests = tmp_path / "test_Q.csv"
    tests.write_text("id,question\nq1,How much energy did the training run use in MWh?\n")
    row = ["d1", "How much energy did the training run use, in MWh?", "24 MWh", "24", "MWh", "['doc1']", "['u']",
           "Training used 24 MWh", "Quote"]
    problems = check_file(_write(tmp_path, [row]), _corpus(tmp_path), tests)
    assert any("word overlap" in p for p in problems)


def test_checker_names_wrong_columns(tmp_path: Path) -> None:
    p = tmp_path / "bad.csv"
    p.write_text("id,question\nd1,x\n")
    with pytest.raises(ValueError, match="bad.csv: columns"):
        read_rows(p)


# --- helpers ---------------------------------------------------------------------

def test_normalise_text_joins_hyphenation_and_spacing() -> None:
    assert normalise_text("pro-\nduced  4.3 net\ntCO 2 e") == normalise_text("produced 4.3 net tCO2e")
    assert normalise_text("on-demand") == normalise_text("on-\ndemand")
    assert normalise_text("A\u2013B \u201cx\u201d") == normalise_text('A-B "x"')


HELDOUT = ["heldout_tables_QA.csv", "heldout_tables2_QA.csv", "heldout_tables3_QA.csv"]


def test_held_out_table_sets_are_their_own_and_their_numbers_are_in_the_cited_text() -> None:
    """The held-out table questions (issue 25; bench/sample_table_cells.py draws) use ids no other labelled file
    uses, echo no test question, cite one document each, and every numeric answer is printed in it."""
    import json
    import re

    with open(DATA / "test_Q.csv", newline="", encoding="utf-8-sig") as f:
        tests = [r["question"] for r in csv.DictReader(f)]
    labelled = ("dev_QA.csv", "dev_tables_QA.csv", "train_QA.csv")
    seen = {r.data["id"] for name in labelled for r in read_rows(DATA / name)}
    texts: dict[str, str] = {}  # each cited document read and normalised once
    for name in HELDOUT:
        rows = [r.data for r in read_rows(DATA / name)]
        ids = {r["id"] for r in rows}
        assert len(ids) == len(rows) and not ids & seen, name
        seen |= ids
        for r in rows:
            assert max_overlap(r["question"], tests)[0] < devset.MAX_TEST_OVERLAP, r["id"]
            (doc,) = [d.strip(" '\"") for d in r["ref_id"].strip("[]").split(",")]
            if kind(r) == "numeric":
                if doc not in texts:
                    raw = json.loads((DATA / "corpus" / f"{doc}.json").read_text(encoding="utf-8"))["text"]
                    texts[doc] = re.sub(r"(?<=\d),(?=\d{3})", "", normalise_text(raw))  # "10,505" is the answer 10505
                assert normalise_text(r["answer_value"]) in texts[doc], (name, r["id"])
