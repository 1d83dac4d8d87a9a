"""A tiny real project (two PDFs and a Markdown file, three labelled questions) copied
from this repository's dvc.yaml, params.yaml and stages/, for end-to-end runs of the real
pipeline: the e2e tests and bench/determinism.py use it."""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = {
    "solar2023": [
        ("1 Introduction", ["The Maryland solar farm is one of the largest renewable projects of the company.",
                            "It started operating in 2023 after two years of construction."]),
        ("2 Results", ["The solar farm generates 150 MWh of electricity per year.",
                       "This avoids about 90 metric tons of CO2e annually."]),
    ],
    "gpu2024": [
        ("1 Setup", ["We measured inference on NVIDIA A100 GPUs in a single data center.",
                     "Each server holds eight accelerators."]),
        ("2 Power", ["The A100 GPU has a peak power draw of 400 W.",
                     "Average utilisation during the benchmark was 60 percent."]),
    ],
}
MARKDOWN = """# Water use of data centers

## 1 Cooling

Evaporative cooling dominates the water footprint of large data centers.

## 2 Findings

Training the model consumed 700,000 liters of clean freshwater in total.
The data center reported a power usage effectiveness of 1.1 for the year.
"""
QUESTIONS = [
    ("q1", "How much electricity does the Maryland solar farm generate per year?", "150 MWh", "150", "MWh", "['solar2023']"),
    ("q2", "What is the peak power draw of the A100 GPU in watts?", "400 W", "400", "W", "['gpu2024']"),
    ("q3", "How many liters of freshwater did training the model consume?", "700000 liters", "700000", "liters",
     "['water2022']"),
]


def make_pdf(path: Path, sections: list[tuple[str, list[str]]]) -> None:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    y = 72
    for heading, paras in sections:
        page.insert_text((72, y), heading, fontsize=14, fontname="hebo")
        y += 28
        for para in paras:
            page.insert_text((72, y), para, fontsize=10)
            y += 26
        y += 10
    doc.save(path)


def make_project(tmp: Path, model: str = "qwen2.5-coder-0.5b", name: str = "proj") -> Path:
    """A DVC project under tmp/name with the tiny corpus and small retrieval/answer params."""
    proj = tmp / name
    proj.mkdir()
    for name in ("dvc.yaml", "params.yaml"):
        shutil.copy(ROOT / name, proj / name)
    shutil.copytree(ROOT / "stages", proj / "stages", ignore=shutil.ignore_patterns("__pycache__"))
    corpus = proj / "data" / "corpus"
    corpus.mkdir(parents=True)
    for doc_id, sections in DOCS.items():
        make_pdf(corpus / f"{doc_id}.pdf", sections)
    (corpus / "water2022.md").write_text(MARKDOWN)
    with (proj / "data" / "metadata.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "type", "title", "year", "citation", "url"])
        w.writerow(["solar2023", "report", "Solar report", "2023", "Acme (2023). Solar report.", "https://example.org/solar"])
        w.writerow(["gpu2024", "paper", "GPU power", "2024", "Ada Lovelace (2024). GPU power.", "https://example.org/gpu"])
        w.writerow(["water2022", "paper", "Water use", "2022", "Bo Li (2022). Water use.", "https://example.org/water"])
    with (proj / "data" / "questions.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "question", "answer", "answer_value", "answer_unit", "ref_id", "ref_url",
                    "supporting_materials", "explanation"])
        for qid, q, a, v, u, r in QUESTIONS:
            w.writerow([qid, q, a, v, u, r, "is_blank", "is_blank", "Quote"])
    params = yaml.safe_load((proj / "params.yaml").read_text())
    params["data"] = {"corpus_dir": "data/corpus", "metadata": "data/metadata.csv", "questions": "data/questions.csv"}
    params["llm"].update(model=model, n_ctx=4096)
    params["plan"]["n_queries"] = 2
    params["retrieve"].update(max_context_tokens=300)
    params["answer"].update(max_retries=1, demo_file="data/questions.csv", demos=[])
    params["ensemble"]["n"] = 2
    (proj / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return proj


def dvc(proj: Path, *args: str) -> str:
    """Run dvc in `proj` with this interpreter's venv on PATH; fail with the log's tail."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "DVC_NO_ANALYTICS": "1"}
    r = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=proj, env=env, capture_output=True, text=True,
                       timeout=1500)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    return out


