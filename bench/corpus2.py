"""The second corpus (tests/data/corpus2: five real PDFs from Debian's documentation packages,
22 questions with gold pages) end to end with the default model, stage by stage.

    flock /tmp/treerag-heavy.lock python bench/corpus2.py                 # default 1.5B, default params
    python bench/corpus2.py --model qwen2.5-coder-0.5b --out /tmp/c2.json
    python bench/corpus2.py -S retrieve.named_docs=prior                # any params override

Builds a real DVC project (tests/corpus2_project.py: this repository's dvc.yaml, params.yaml
and stages/, data.* on the corpus, the neutral `corpus:` defaults, no WattBot demos), runs
`dvc repro --single-item <stage>` for every stage in dvc.yaml order, each in a child process
whose wall time, CPU time (user+sys of the stage and its children) and peak RSS are recorded,
with a fresh LLM response cache (so the times are those of real calls; --shared-cache uses
~/.cache/treerag). Writes bench/results/corpus2.json: the official score (and strict), score
per question type, gold-document and gold-page recall of the first context at the params'
budget (and of the widened retry context), evidence recall, the per-stage costs, and each
question's gold and predicted answer.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
from corpus2_project import gold_recall, make_corpus2_project, read_questions  # noqa: E402

OUT = ROOT / "bench" / "results" / "corpus2.json"

# runs one `dvc repro` in a child and prints its costs: RUSAGE_CHILDREN covers dvc and the stage it waits for
MEASURE = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - t
u = resource.getrusage(resource.RUSAGE_CHILDREN)
sys.stderr.write(r.stdout[-3000:] + r.stderr[-3000:])
print(json.dumps({"rc": r.returncode, "wall_s": round(wall, 2), "cpu_s": round(u.ru_utime + u.ru_stime, 2),
                  "peak_rss_mb": round(u.ru_maxrss / 1024, 1)}))
"""


def parse_overrides(items: list[str]) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for item in items:
        key, _, value = item.partition("=")
        section, _, name = key.partition(".")
        if not (section and name and _):
            raise SystemExit(f"-S {item!r}: expected section.key=value")
        out.setdefault(section, {})[name] = yaml.safe_load(value)
    return out


def measure(cmd: list[str], cwd: Path, env: dict[str, str] | None, what: str) -> dict[str, float]:
    """Run `cmd` in `cwd` under MEASURE: its wall, CPU s (with children) and peak RSS; exits on failure."""
    r = subprocess.run([sys.executable, "-c", MEASURE, *cmd], check=False, cwd=cwd, env=env, capture_output=True,
                       text=True)
    if r.returncode != 0 or not r.stdout.strip():
        raise SystemExit(f"{what}: measuring wrapper failed\n{r.stderr[-4000:]}")
    costs = json.loads(r.stdout.strip().splitlines()[-1])
    if costs.pop("rc") != 0:
        raise SystemExit(f"{what} failed:\n{r.stderr[-4000:]}")
    return costs


def run_stage(proj: Path, stage: str, env: dict[str, str]) -> dict[str, float]:
    return measure([sys.executable, "-m", "dvc", "repro", "--single-item", stage], proj, env, f"stage {stage}")


def recall_only(args: argparse.Namespace, proj: Path, costs: dict[str, dict[str, float]], total: float) -> None:
    """Gold-document and gold-page recall of the first and the retry context (no answers)."""
    first, wide = gold_recall(proj, attempt=0), gold_recall(proj, attempt=1)
    result = {"command": "python bench/corpus2.py " + " ".join(sys.argv[1:]),
              "retrieval": {"gold_doc_recall": first["gold_doc_recall"], "gold_page_recall": first["gold_page_recall"],
                            "retry_context": {k: wide[k] for k in ("gold_doc_recall", "gold_page_recall")},
                            "answerable_questions": first["answerable_questions"]},
              "stages": costs, "total_wall_s": total}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["retrieval"], indent=2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None, help="llm.model (default: params.yaml's)")
    ap.add_argument("-S", dest="overrides", action="append", default=[], help="section.key=value (YAML value)")
    ap.add_argument("--shared-cache", action="store_true", help="use ~/.cache/treerag, not a fresh cache")
    ap.add_argument("--keep", type=Path, default=None, help="build the project here and keep it")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--until", default=None, metavar="STAGE",
                    help="stop after this stage (retrieve: recall only, no LLM call with plan.n_queries 1)")
    args = ap.parse_args()

    overrides = parse_overrides(args.overrides)
    model = args.model or yaml.safe_load((ROOT / "params.yaml").read_text())["llm"]["model"]
    work = args.keep or Path(tempfile.mkdtemp(prefix="treerag-corpus2-"))
    work.mkdir(parents=True, exist_ok=True)
    proj = make_corpus2_project(work, model=model, overrides=overrides)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "DVC_NO_ANALYTICS": "1"}
    if not args.shared_cache:
        env["TREERAG_CACHE_DIR"] = str(work / "cache")
    subprocess.run([sys.executable, "-m", "dvc", "init", "--no-scm", "-q"], cwd=proj, env=env, check=True)

    stages = list(yaml.safe_load((proj / "dvc.yaml").read_text())["stages"])
    if args.until:
        if args.until not in stages:
            raise SystemExit(f"--until {args.until}: not a stage of dvc.yaml ({', '.join(stages)})")
        stages = stages[:stages.index(args.until) + 1]
    costs: dict[str, dict[str, float]] = {}
    t0 = time.perf_counter()
    for stage in stages:
        costs[stage] = run_stage(proj, stage, env)
        print(f"{stage:<11} {costs[stage]}", flush=True)
    total = round(time.perf_counter() - t0, 1)
    if args.until:
        recall_only(args, proj, costs, total)
        return

    score = json.loads((proj / "metrics" / "score.json").read_text())
    categories = json.loads((proj / "metrics" / "categories.json").read_text())
    retrieval = json.loads((proj / "metrics" / "retrieval.json").read_text())
    first, wide = gold_recall(proj, attempt=0), None
    try:
        wide = gold_recall(proj, attempt=1)
    except Exception as e:  # noqa: BLE001 - no retry context is a result, not a failure
        wide = {"error": str(e)}
    with (proj / "submissions" / "submission.csv").open(newline="") as f:
        pred = {r["id"]: r for r in csv.DictReader(f)}
    from stages.core.score.metric import score_question

    questions = []
    for q in read_questions():
        p = pred.get(q["id"], {})
        s = score_question(q, p)
        hit = first["per_question"].get(q["id"], {})
        questions.append({"id": q["id"], "type": s.question_type, "gold": q["answer_value"], "unit": q["answer_unit"],
                          "gold_ref": q["ref_id"], "gold_page": q["gold_page"], "pred": p.get("answer_value"),
                          "pred_ref": p.get("ref_id"), "score": round(s.score, 4), "value": s.value, "ref": s.ref,
                          "gold_doc_in_context": hit.get("doc"), "gold_page_in_context": hit.get("page")})
    params = yaml.safe_load((proj / "params.yaml").read_text())
    result = {
        "command": "python bench/corpus2.py " + " ".join(sys.argv[1:]),
        "corpus": "tests/data/corpus2 (5 real PDFs, 67 pages; 22 questions, 19 answerable)",
        "model": model,
        "params": {"retrieve.max_context_tokens": params["retrieve"]["max_context_tokens"],
                   "answer.max_retries": params["answer"]["max_retries"], "ensemble.n": params["ensemble"]["n"],
                   "corpus": params["corpus"], "overrides": overrides},
        "score": {k: score[k] for k in ("n", "score", "strict", "symmetric", "value", "ref", "na") if k in score},
        "per_type": categories.get("types"),
        "categories": categories.get("categories"),
        "retrieval": {"gold_doc_recall": first["gold_doc_recall"], "gold_page_recall": first["gold_page_recall"],
                      "retry_context": {k: wide[k] for k in ("gold_doc_recall", "gold_page_recall", "error")
                                        if k in wide},
                      "evidence_recall": retrieval.get("evidence_recall"),
                      "mean_context_tokens": retrieval.get("mean_context_tokens"),
                      "answerable_questions": first["answerable_questions"]},
        "stages": costs,
        "total_wall_s": total,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "questions": questions,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps({k: result[k] for k in ("score", "retrieval", "total_wall_s")}, indent=2))
    print(f"wrote {args.out}; project in {proj}")


if __name__ == "__main__":
    main()
