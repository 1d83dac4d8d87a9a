"""What hiding answer_unit costs on dev, paying only for the questions whose request changes.

    python bench/unit_hidden_dev.py        # needs the committed dev contexts; real LLM (flock the heavy lock)

With `answer.infer_unit: always` a question's request differs from the units-given one only where
the inferred (kind, unit) differs from the file's (`bench/unit_inference.py` counts them); every
other question sends the byte-identical request and gets the same reply, so its score difference is
exactly 0. This answers just the differing dev questions (worked examples excluded), units given and
hidden, writes both verdicts to bench/results/answer_eval/k26-dev-units-differ/ and prints the paired
bootstrap of the difference over all dev questions (zeros for the unchanged ones).
"""
from __future__ import annotations

import copy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
from lib.answer_eval import apply_overrides, run_config  # noqa: E402

from stages.core.answer.kinds import question_type  # noqa: E402
from stages.core.common.params import load_params, section  # noqa: E402
from stages.core.llm.params import LLMParams  # noqa: E402
from stages.core.llm.session import llm_session  # noqa: E402
from stages.core.score.bootstrap import paired_bootstrap  # noqa: E402

OUT = ROOT / "bench/results/answer_eval/k26-dev-units-differ"
CONTEXTS = ROOT / "bench/results/answer_eval/contexts/dev-3828c120720c.parquet"


def main() -> None:
    dev = pl.read_csv(ROOT / "data/wattbot/dev_QA.csv", infer_schema=False).fill_null("")
    params = load_params(ROOT / "params.yaml")
    params["ensemble"]["n"] = 1
    demos = set(params["answer"]["demos"])
    scored = [r for r in dev.iter_rows(named=True) if r["id"] not in demos]
    differ = [r["id"] for r in scored
              if (lambda a, b: (a.kind, a.unit) != (b.kind, b.unit))(
                  question_type(r["question"], r["answer_unit"], "always"),
                  question_type(r["question"], r["answer_unit"], "never"))]
    print(f"{len(differ)} of {len(scored)} dev questions change their request: {differ}", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    sub = OUT / "dev_units_differ.csv"
    dev.filter(pl.col("id").is_in(differ)).write_csv(sub)
    ctx = pl.read_parquet(CONTEXTS)
    scores = {}
    with llm_session(section(LLMParams, "llm", params)) as llm:
        for name, over in (("given", []), ("hidden", ["answer.infer_unit=always"])):
            res = run_config(llm, apply_overrides(copy.deepcopy(params), over), sub, ctx,
                             ROOT / params["data"]["metadata"], desc=f"dev-units-differ/{name}")
            res.verdicts.write_csv(OUT / f"dev_{name}_verdicts.csv")
            scores[name] = dict(zip(res.verdicts["id"].to_list(), res.verdicts["score"].cast(float).to_list()))
    a, b = np.zeros(len(scored)), np.zeros(len(scored))
    a[:len(differ)] = [scores["given"][q] for q in differ]
    b[:len(differ)] = [scores["hidden"][q] for q in differ]
    bs = paired_bootstrap(a, b)
    print(f"dev {len(scored)}: hidden - given = {bs.delta:+.4f} [{bs.low:+.4f}, {bs.high:+.4f}] 95% paired bootstrap, "
          f"P(delta<=0)={bs.p_not_better:.3f}")


if __name__ == "__main__":
    main()
