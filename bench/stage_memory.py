"""Peak RSS of the question stages (plan, retrieve, answer, vote, score) vs. the number of questions.

    python bench/stage_memory.py                 # train (41), dev, dev+train; WattBot artifacts of `dvc repro index`

Which stage holds memory that grows with the questions? Each question set runs in its own
folder under bench/data/stage_memory/ that links the repository's artifacts up to `index`
(read only) and has a params.yaml that is the repository's with `data.questions` pointed at
the set and `llm.base_url` at a fake OpenAI-compatible endpoint (tests/fake_openai.py,
deterministic replies, in this process): every stage runs as `python -m stages.<stage>`
with its own Python-side data (nodes, vectors, contexts, replies, reports) at full scale,
while the model's memory is the embedded llama.cpp server's, measured by
bench/llm_memory.py. TREERAG_CACHE_DIR is a fresh folder (the shared caches are never
touched). Peak RSS from os.wait4 (ru_maxrss), wall and CPU s per stage.
Results: bench/results/stage_memory.json.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = ROOT / "bench" / "data" / "stage_memory"
OUT = ROOT / "bench" / "results" / "stage_memory.json"
LINKED = ("extract", "caption", "tree", "embed", "index")
STAGES = ("plan", "retrieve", "answer", "vote", "score")


def question_sets(work: Path) -> dict[str, Path]:
    import polars as pl

    from stages.core.common.dataio import read_questions

    train, dev = ROOT / "data/wattbot/train_QA.csv", ROOT / "data/wattbot/dev_QA.csv"
    both = work / "dev_train_QA.csv"
    both.parent.mkdir(parents=True, exist_ok=True)
    frames = [pl.read_csv(p, infer_schema=False) for p in (dev, train)]
    pl.concat(frames, how="diagonal").write_csv(both)
    read_questions(both)  # fails here, not in a stage, if the union is not a valid questions file
    return {"train": train, "dev": dev, "dev+train": both}


def run_set(name: str, questions: Path, base_url: str) -> dict:
    import yaml

    from stages.core.common.dataio import read_questions

    work = DATA / name.replace("+", "_")
    shutil.rmtree(work, ignore_errors=True)
    (work / "artifacts").mkdir(parents=True)
    for a in LINKED:
        (work / "artifacts" / a).symlink_to(ROOT / "artifacts" / a)
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["data"] = {k: str(ROOT / v) for k, v in params["data"].items()}
    params["data"]["questions"] = str(questions)
    params["answer"]["demo_file"] = str(ROOT / params["answer"]["demo_file"])
    params["llm"]["base_url"] = base_url
    (work / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TREERAG_CACHE_DIR": str(work / "cache")}
    out = {"questions": read_questions(questions).height, "stages": {}}
    for stage in STAGES:
        log = (work / f"{stage}.log").open("w")
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", f"stages.{stage}"], cwd=work, env=env, stdout=log,
                                stderr=subprocess.STDOUT)
        _, status, ru = os.wait4(proc.pid, 0)
        log.close()
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{stage} failed on {name}:\n{(work / f'{stage}.log').read_text()[-2000:]}")
        out["stages"][stage] = {"wall_s": round(time.perf_counter() - t0, 2),
                                "cpu_s": round(ru.ru_utime + ru.ru_stime, 2),
                                "peak_rss_mb": round(ru.ru_maxrss / 1024, 1)}
        print(f"{name} ({out['questions']} q): {stage}: {out['stages'][stage]}", flush=True)
    shutil.rmtree(work / "cache", ignore_errors=True)
    return out


def main() -> int:
    from tests.fake_openai import FakeConfig, FakeOpenAI

    missing = [a for a in LINKED if not (ROOT / "artifacts" / a).exists()]
    if missing:
        raise SystemExit(f"artifacts/{missing[0]} is missing: run `dvc repro index` first")
    sets = question_sets(DATA)
    result: dict = {"cpu_cores": os.cpu_count(), "llm": "fake endpoint (tests/fake_openai.py)", "sets": {}}
    with FakeOpenAI(FakeConfig(dim=384)) as fake:
        for name, path in sets.items():
            result["sets"][name] = run_set(name, path, fake.base_url)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
