"""Checks for hand-written labelled questions (data/wattbot/dev_QA.csv).

A dev set is only worth its labels: every supporting quote must really be in the
cited document, every answer_value must follow from that quote, and no question may
echo a competition test question. This module holds those checks (stdlib only, so a
writer can run them before the venv exists) and the kind of each question for the
mix table.

    python -m bench.lib.devset data/wattbot/dev_QA.csv   # prints problems, exit 1 if any
"""
from __future__ import annotations

import csv
import json
import re
import sys
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from stages.core.answer.grounding import eval_arithmetic, grounded_number, numbers_in
from stages.core.common.values import close, parse_ref_ids
from stages.core.common.vocab import CONVERSION_CONSTANTS

COLUMNS = [
    "id", "question", "answer", "answer_value", "answer_unit",
    "ref_id", "ref_url", "supporting_materials", "explanation",
]
NA_ANSWER = "Unable to answer with confidence based on the provided documents."
MAX_TEST_OVERLAP = 0.5  # word-set Jaccard with any test_Q question must stay below

# the conversion constants that change a unit (not halves, tens, percent or months)
UNIT_CONVERSIONS = CONVERSION_CONSTANTS - {1.0, 2.0, 10.0, 100.0, 7.0, 12.0, 1e12}
_WORD = re.compile(r"[a-z0-9]+")


def normalise_text(s: str) -> str:
    """Lower-cased text with unicode forms, dashes, hyphenation and whitespace unified.

    PDF extraction breaks words at line ends ("hyphen- ation") and spaces
    sub-scripts ("CO 2"), so a quote is compared on this form, never raw.
    """
    s = unicodedata.normalize("NFKC", s).lower()
    s = s.replace("\u00ad", "")
    s = re.sub(r"[\u2010-\u2015\u2212]", "-", s)
    s = re.sub(r"[\u2018\u2019\u201a\u201b`]", "'", s)
    s = re.sub(r"[\u201c\u201d\u201e]", '"', s)
    s = s.replace("-", "")  # line-end hyphenation ("on-\ndemand") vs a typed "on-demand"
    s = re.sub(r"\s+", "", s)  # spacing differs between PDF text and a typed quote
    return s


def quote_segments(quote: str) -> list[str]:
    """The parts of a quote joined by an ellipsis, each of which must occur verbatim."""
    parts = re.split(r"\.\.\.|\u2026|\s\|\s", quote.strip().strip('"').strip())
    return [p.strip() for p in parts if len(normalise_text(p)) >= 8]


def math_expression(explanation: str) -> str | None:
    """The expression of a ``Math: a / b = c`` explanation (text before the last '=')."""
    m = re.match(r"\s*math\s*:\s*(.+)", explanation, re.IGNORECASE | re.DOTALL)
    if not m:
        return None
    body = m.group(1).split("=")[0] if "=" in m.group(1) else m.group(1)
    return body.strip()


@dataclass(frozen=True)
class Row:
    line: int  # 1-based line in the file, header = 1
    data: dict[str, str]


def read_rows(path: Path) -> list[Row]:
    """Rows of a labelled CSV; raises ValueError naming the file if the columns differ."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != COLUMNS:
            raise ValueError(f"{path}: columns {reader.fieldnames} != {COLUMNS}")
        return [Row(i + 2, dict(r)) for i, r in enumerate(reader)]


def kind(row: dict[str, str]) -> str:
    """na | true_false | range | text | numeric, from the label alone."""
    v = row["answer_value"].strip()
    if v == "is_blank":
        return "na"
    if row["question"].strip().lower().startswith("true or false"):
        return "true_false"
    if v.startswith("[") and v.endswith("]"):
        return "range"
    try:
        float(v)
        return "numeric"
    except ValueError:
        return "text"


def hard_kinds(row: dict[str, str]) -> list[str]:
    """The costly kinds a row exercises (for the mix table), read off its label."""
    tags = []
    expl = row["explanation"].strip().lower()
    if expl.startswith("table"):
        tags.append("table_value")
    expr = math_expression(row["explanation"])
    if expr is not None:
        try:
            _, ops = eval_arithmetic(expr)
        except ValueError:
            ops = []
        tags.append("unit_conversion" if any(o in UNIT_CONVERSIONS for o in ops) else "arithmetic")
    if re.search(r"\b(million|billion|trillion|thousand)\b", row["supporting_materials"], re.I):
        tags.append("magnitude_word")
    if re.search(r"et al\.|\b(19|20)\d\d (paper|report|study|survey)|paper by|report by",
                 row["question"], re.I):
        tags.append("named_paper")
    return tags


def word_set(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def max_overlap(question: str, others: list[str]) -> tuple[float, str]:
    """Highest word-set Jaccard of a question with any of others, and that question."""
    ws = word_set(question)
    best = max(((jaccard(ws, word_set(o)), o) for o in others), default=(0.0, ""))
    return best


def load_corpus_texts(corpus_dir: Path) -> dict[str, str]:
    """doc id -> normalised full text of each corpus JSON."""
    texts = {}
    for p in sorted(corpus_dir.glob("*.json")):
        d = json.loads(p.read_text(encoding="utf-8"))
        texts[p.stem] = normalise_text(d.get("text", ""))
    return texts


def check_row(row: Row, texts: dict[str, str]) -> list[str]:
    """Every problem of one labelled row, each naming its id and line."""
    r = row.data
    where = f"line {row.line} ({r['id']})"
    problems: list[str] = []
    k = kind(r)
    if k == "na":
        for col in ("ref_id", "ref_url", "supporting_materials", "explanation"):
            if r[col].strip() != "is_blank":
                problems.append(f"{where}: unanswerable row needs {col} = is_blank")
        if r["answer"].strip() != NA_ANSWER:
            problems.append(f"{where}: unanswerable row needs answer = {NA_ANSWER!r}")
        return problems
    refs = parse_ref_ids(r["ref_id"])
    if not refs or not r["ref_id"].strip().startswith("["):
        problems.append(f"{where}: ref_id must be a list like ['doc']")
    missing = [d for d in refs if d not in texts]
    if missing:
        problems.append(f"{where}: ref_id names unknown documents {missing}")
        return problems
    segments = quote_segments(r["supporting_materials"])
    if not segments:
        problems.append(f"{where}: supporting_materials holds no quote")
    for seg in segments:
        if not any(normalise_text(seg) in texts[d] for d in refs):
            problems.append(f"{where}: quote not found in {refs}: {seg[:70]!r}")
    quote = r["supporting_materials"]
    qnums = numbers_in(quote)
    v = r["answer_value"].strip()
    if k == "true_false":
        if v not in ("0", "1"):
            problems.append(f"{where}: True/False answer_value must be 1 or 0")
        if r["answer_unit"].strip() != "is_blank":
            problems.append(f"{where}: True/False answer_unit must be is_blank")
    elif k == "text":
        if r["answer_unit"].strip() != "is_blank":
            problems.append(f"{where}: a name/phrase answer has answer_unit is_blank")
        if normalise_text(v) not in normalise_text(quote):
            problems.append(f"{where}: text answer {v!r} is not in the quote")
    else:
        if r["answer_unit"].strip() in ("", "is_blank"):
            problems.append(f"{where}: a numeric answer needs its unit in answer_unit")
        values = [float(x) for x in v.strip("[]").split(",")] if k == "range" else [float(v)]
        if k == "range" and (len(values) != 2 or values[0] > values[1]):
            problems.append(f"{where}: a range is [low,high]")
        expr = math_expression(r["explanation"])
        if expr is not None:
            try:
                result, operands = eval_arithmetic(expr)
            except ValueError as e:
                problems.append(f"{where}: Math expression {expr!r} does not evaluate: {e}")
                return problems
            decimals = len(v.split(".")[1]) if "." in v else 0
            if k == "range" or not (close(result, values[0])
                                    or round(result, decimals) == values[0]):
                problems.append(f"{where}: Math {expr!r} = {result:.6g}, not {v}")
            for o in operands:
                if o not in CONVERSION_CONSTANTS and not grounded_number(o, qnums):
                    problems.append(f"{where}: Math operand {o:g} is not in the quote")
        else:
            for x in values:
                if not grounded_number(x, qnums):
                    problems.append(f"{where}: value {x:g} is not a number of the quote "
                                    "(add 'Math: ... = value' for a conversion)")
    if r["explanation"].strip() in ("", "is_blank"):
        problems.append(f"{where}: explanation is empty (Quote/Table/Figure/Math: ...)")
    return problems


def check_file(path: Path, corpus_dir: Path, test_questions: Path | None) -> list[str]:
    """Every problem of a labelled CSV: format, quotes, values, ids, overlap with test_Q."""
    rows = read_rows(path)
    texts = load_corpus_texts(corpus_dir)
    problems: list[str] = []
    ids = Counter(r.data["id"] for r in rows)
    problems += [f"{path}: id {i} used {n} times" for i, n in ids.items() if n > 1]
    tests: list[str] = []
    if test_questions is not None and test_questions.exists():
        with open(test_questions, newline="", encoding="utf-8-sig") as f:
            tests = [t["question"] for t in csv.DictReader(f)]
    for row in rows:
        problems += check_row(row, texts)
        if tests:
            j, _ = max_overlap(row.data["question"], tests)
            if j >= MAX_TEST_OVERLAP:
                problems.append(f"line {row.line} ({row.data['id']}): word overlap {j:.2f} "
                                "with a test_Q question: write another question")
    return problems


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if not args:
        print("usage: python -m bench.lib.devset FILE.csv [...]", file=sys.stderr)
        return 2
    root = Path(__file__).resolve().parents[2] / "data" / "wattbot"
    bad = 0
    for name in args:
        problems = check_file(Path(name), root / "corpus", root / "test_Q.csv")
        for p in problems:
            print(f"{name}: {p}")
        rows = read_rows(Path(name))
        mix = Counter(kind(r.data) for r in rows)
        hard = Counter(t for r in rows for t in hard_kinds(r.data))
        print(f"{name}: {len(rows)} rows, {len(problems)} problems; kinds {dict(mix)}; "
              f"hard kinds {dict(hard)}")
        bad += len(problems)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
