"""A real DVC project on the second corpus (tests/data/corpus2: five real PDFs from Debian's
documentation packages, 22 questions with gold pages), for tests/test_corpus2.py and
bench/corpus2.py: this repository's dvc.yaml, params.yaml and stages/, data.* pointed at
the corpus, the `corpus:` section at its neutral defaults (none of WattBot's words), no
WattBot worked examples."""
from __future__ import annotations

import csv
import dataclasses
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from stages.core.common.corpus import CorpusParams
from stages.core.common.values import is_blank, ref_id_set

ROOT = Path(__file__).resolve().parents[1]
CORPUS2 = ROOT / "tests" / "data" / "corpus2"


def read_questions() -> list[dict[str, str]]:
    """The gold rows of corpus2/questions.csv (gold_page as written: a page number or is_blank)."""
    with (CORPUS2 / "questions.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def make_corpus2_project(tmp: Path, model: str = "qwen2.5-coder-1.5b", name: str = "corpus2",
                         overrides: dict[str, dict[str, Any]] | None = None) -> Path:
    """A DVC project under tmp/name on corpus2; `overrides` updates params sections ({"retrieve": {...}})."""
    proj = tmp / name
    proj.mkdir(parents=True)
    for f in ("dvc.yaml", "params.yaml"):
        shutil.copy(ROOT / f, proj / f)
    shutil.copytree(ROOT / "stages", proj / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    data = proj / "data"
    shutil.copytree(CORPUS2 / "corpus", data / "corpus")
    for f in ("metadata.csv", "questions.csv"):
        shutil.copy(CORPUS2 / f, data / f)
    params = yaml.safe_load((proj / "params.yaml").read_text())
    params["data"] = {"corpus_dir": "data/corpus", "metadata": "data/metadata.csv", "questions": "data/questions.csv"}
    params["corpus"] = dataclasses.asdict(CorpusParams())  # the neutral defaults, not WattBot's words
    params["llm"]["model"] = model
    # WattBot's worked examples are dev_QA ids: none here; demo_file must still name an existing file
    params["answer"].update(demos=[], demo_file="data/questions.csv")
    for section, values in (overrides or {}).items():
        params[section].update(values)
    (proj / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True))
    return proj


def gold_recall(proj: Path, attempt: int = 0) -> dict[str, Any]:
    """Gold-document and gold-page recall of the context of each answerable question.

    A question's gold page is in the context when a unit of a gold document starts on it or
    spans it (node page..page_end); `attempt` 0 is the first context, 1 the first retry's (wider)."""
    name = "contexts.parquet" if attempt == 0 else "retry_contexts.parquet"
    ctx = pl.read_parquet(proj / "artifacts" / "retrieve" / name).filter(pl.col("attempt") == attempt)
    if ctx.is_empty():
        raise ValueError(f"{proj}: no context of attempt {attempt} in artifacts/retrieve/{name}")
    nodes = pl.read_parquet(proj / "artifacts" / "tree" / "nodes.parquet", columns=["node_id", "page", "page_end"])
    ctx = ctx.join(nodes.rename({"page": "node_page"}), on="node_id", how="left")
    per_q: dict[str, dict[str, Any]] = {}
    for row in read_questions():
        if is_blank(row["answer_value"]):
            continue
        gold_docs = ref_id_set(row["ref_id"])
        page = int(row["gold_page"])
        units = ctx.filter(pl.col("question_id") == row["id"])
        docs = {d.lower() for d in units["doc_id"].to_list()}
        pages = set()
        for u in units.iter_rows(named=True):
            if u["doc_id"].lower() in gold_docs:
                first = u["page"] if u["page"] is not None else u["node_page"]
                last = u["page_end"] if u["page_end"] is not None else first
                if first is not None:
                    pages.update(range(int(first), int(max(first, last)) + 1))
        per_q[row["id"]] = {"doc": bool(docs & gold_docs), "page": page in pages, "units": units.height}
    n = len(per_q)
    return {
        "answerable_questions": n,
        "gold_doc_recall": round(sum(q["doc"] for q in per_q.values()) / n, 4) if n else 0.0,
        "gold_page_recall": round(sum(q["page"] for q in per_q.values()) / n, 4) if n else 0.0,
        "per_question": per_q,
    }
