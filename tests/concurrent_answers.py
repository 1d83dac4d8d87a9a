"""A small synthetic answer job (questions, contexts) for the concurrency tests; run as a script it
answers them against `base_url` with `max_concurrency` requests at once and writes the rows as JSON
(the test kills it with SIGKILL mid-way to check resume from the response cache).

    python tests/concurrent_answers.py BASE_URL MAX_CONCURRENCY OUT.json
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stages.core.answer.ensemble import MemberRun, answer_members  # noqa: E402
from stages.core.answer.params import AnswerParams, EnsembleParams  # noqa: E402
from stages.core.answer.record import ContextBlock  # noqa: E402
from stages.core.llm.params import LLMParams  # noqa: E402
from stages.core.llm.session import llm_session  # noqa: E402


def questions(n: int) -> pl.DataFrame:
    return pl.DataFrame({"id": [f"q{i:02d}" for i in range(n)],
                         "question": [f"How much energy did system {i} use?" for i in range(n)],
                         "answer_unit": ["MWh"] * n})


def contexts(n: int) -> dict[str, list[list[ContextBlock]]]:
    return {f"q{i:02d}": [[ContextBlock(f"doc{i}", f"System {i} used {10 + i} MWh in {2000 + i} and {i}.5 more."),
                           ContextBlock(f"doc{i + 1}", f"Another {3 * i} MWh were reported.")]]
            for i in range(n)}


def corpus(n: int) -> set[str]:
    return {f"doc{i}" for i in range(n + 1)}


# the fake endpoint writes the free reader's replies (the typed reader is the default)
FREE_READER = AnswerParams(reader="free", max_retries=2)


def run(base_url: str, concurrency: int, n: int, members: int, **llm: object) -> tuple[list[list[dict]], int]:
    """(rows, the most requests the client had in flight at once)."""
    params = LLMParams(base_url=base_url, model="fake", max_concurrency=concurrency, **llm)
    with llm_session(params) as client:
        rows = answer_members(client, questions(n), contexts(n), FREE_READER, EnsembleParams(n=members, seed=0),
                              MemberRun("fake", corpus(n), desc="test"))
        return rows, client.throttle.max_in_flight


if __name__ == "__main__":
    url, conc, out = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    rows, _ = run(url, conc, 16, 2)
    # latency and cache hits differ between a resumed and a fresh run by design; the answers must not
    out.write_text(json.dumps([[{k: v for k, v in r.items() if k not in ("latency_s", "cache_hits")} for r in m]
                               for m in rows]))
