"""How well the answer kind and unit are inferred from the question alone (no LLM).

    python bench/unit_inference.py                      # dev_QA, train_QA, corpus2; params.yaml answer.unit_words
    python bench/unit_inference.py --sets dev --show    # also list every miss

For every labelled question it compares `kinds.infer_type(question)` (what `answer.infer_unit`
does where the questions file gives no unit) with the kind the file's real `answer_unit` gives
(`kinds.question_kind`), and the inferred unit with the gold unit, compared case- and
alias-insensitively (both through vocab.QUESTION_UNIT_WORDS, plural -s dropped). A count noun
("how many GPUs") also counts as its head noun ("hardware components" ~ "components").
Writes bench/results/unit_inference.json: the confusion table of kinds per set and the unit
agreement of the questions whose real kind is numeric or range.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stages.core.answer.kinds import KINDS, infer_type, question_kind  # noqa: E402
from stages.core.common.dataio import read_questions  # noqa: E402
from stages.core.common.params import load_params  # noqa: E402
from stages.core.common.values import BLANK  # noqa: E402
from stages.core.common.vocab import QUESTION_UNIT_WORDS  # noqa: E402

SETS = {"dev": "data/wattbot/dev_QA.csv", "train": "data/wattbot/train_QA.csv",
        "corpus2": "tests/data/corpus2/questions.csv"}  # the second corpus (tests/data/corpus2)
OUT = Path("bench/results/unit_inference.json")


def canonical_unit(unit: str) -> str:
    """A unit compared alias- and case-insensitively: 'watts' ~ 'W', 'US dollars' ~ 'USD', 'GPUs' ~ 'gpu'."""
    u = " ".join(unit.strip().lower().replace("per hour", "/h").replace("/hr", "/h").split())
    u = QUESTION_UNIT_WORDS.get(u, u).lower()
    return u[:-1] if len(u) > 3 and u.endswith("s") else u


def head(unit: str) -> str:
    return canonical_unit(unit.split()[-1]) if unit.strip() else ""


def evaluate(path: str, unit_words: dict[str, str]) -> tuple[dict[str, object], list[str]]:
    df = read_questions(path)
    confusion: Counter[tuple[str, str]] = Counter()
    unit_rows = exact = by_head = 0
    misses = []
    for r in df.iter_rows(named=True):
        gold_unit = (r["answer_unit"] or "").strip() or BLANK
        real = question_kind(r["question"], gold_unit)
        got = infer_type(r["question"], unit_words)
        confusion[(real, got.kind)] += 1
        ok_unit = True
        if real in ("numeric", "range"):
            unit_rows += 1
            same = canonical_unit(got.unit) == canonical_unit(gold_unit)
            same_head = same or (got.unit != BLANK and head(got.unit) == head(gold_unit))
            exact += same
            by_head += same_head
            ok_unit = same_head
        if real != got.kind or not ok_unit:
            misses.append(f"{r['id']}: {real}/{gold_unit!r} -> {got.kind}/{got.unit!r}: {r['question']}")
    n = len(df)
    kinds_right = sum(v for (a, b), v in confusion.items() if a == b)
    table = {real: {got: confusion[(real, got)] for got in KINDS} for real in KINDS
             if any(confusion[(real, g)] for g in KINDS)}
    return {"questions": n, "kind_agreement": round(kinds_right / n, 4), "kind_right": kinds_right,
            "confusion_real_by_inferred": table, "numeric_or_range": unit_rows,
            "unit_exact": exact, "unit_exact_rate": round(exact / max(unit_rows, 1), 4),
            "unit_head": by_head, "unit_head_rate": round(by_head / max(unit_rows, 1), 4)}, misses


def markdown(name: str, res: dict[str, object]) -> str:
    table = res["confusion_real_by_inferred"]
    assert isinstance(table, dict)
    lines = [f"{name}: kinds {res['kind_right']}/{res['questions']} ({res['kind_agreement']:.1%}); units of "
             f"numeric/range questions: exact {res['unit_exact']}/{res['numeric_or_range']} "
             f"({res['unit_exact_rate']:.1%}), head noun {res['unit_head']}/{res['numeric_or_range']} "
             f"({res['unit_head_rate']:.1%})", "",
             "| real \\ inferred | " + " | ".join(KINDS) + " |", "|---" * (len(KINDS) + 1) + "|"]
    for real, row in table.items():
        lines.append(f"| {real} | " + " | ".join(str(row[k]) for k in KINDS) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", nargs="+", default=list(SETS), help="dev, train or a labelled CSV path")
    ap.add_argument("--show", action="store_true", help="list every question whose kind or unit differs")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    unit_words = dict(load_params().get("answer", {}).get("unit_words") or {})
    results = {}
    for name in args.sets:
        res, misses = evaluate(SETS.get(name, name), unit_words)
        results[name] = res
        print(markdown(name, res), "\n")
        if args.show:
            print("\n".join(misses), "\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
