"""Does a refactor answer exactly as before? Every request and every answer, without an LLM.

    python bench/equivalence.py --out /tmp/after.json            # in this checkout
    (cd ../old-clone && python /path/to/bench/equivalence.py --out /tmp/before.json)
    python bench/equivalence.py --diff /tmp/before.json /tmp/after.json

Runs the answer stage's driver (answer_members, then the vote stage's vote and submission)
over the answer benchmark's fixed contexts of dev and train (bench/results/answer_eval/
contexts/, the files of the current retrieval params) with a fake model whose reply is a
deterministic function of the request: it points at a unit, copies one of its numbers,
sometimes abstains (so retries run) and gives True/False log-probabilities. Two checkouts
whose code builds the same requests and reads the replies the same way give the same
fingerprints: the sha256 of the request sequence, of each member's rows and of the
submission. The script imports the answer code from either layout (stages/core/answering.py
before the restructure, stages/core/answer/ after it), so it runs unchanged on both; and with or
without the `vote:` params section (VoteParams, gone since the vote rules became constants), and with
or without the `MemberRun` bundle of answer_members.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path.cwd()
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

try:  # the layout after the restructure (one package per stage)
    from stages.core.answer.ensemble import MEMBER_SCHEMA_OVERRIDES, answer_members  # noqa: E402
    from stages.core.answer.params import AnswerParams, EnsembleParams  # noqa: E402
    from stages.core.answer.record import context_blocks  # noqa: E402
    from stages.core.answer.submission import build_submission  # noqa: E402
    from stages.core.answer.voting import member_answers, vote_all  # noqa: E402
    from stages.core.common.dataio import doc_urls, read_metadata, read_questions  # noqa: E402
    from stages.core.common.params import load_params, section  # noqa: E402
    from stages.core.llm.protocol import Completion  # noqa: E402
except ImportError:  # the flat stages/core of 8411665 and before
    from stages.core.answering import (  # noqa: E402
        MEMBER_SCHEMA_OVERRIDES,
        AnswerParams,
        EnsembleParams,
        answer_members,
        context_blocks,
    )
    from stages.core.dataio import doc_urls, read_metadata, read_questions  # noqa: E402
    from stages.core.llm import Completion  # noqa: E402
    from stages.core.params import load_params, section  # noqa: E402
    from stages.core.submission import build_submission  # noqa: E402
    from stages.core.voting import VoteParams, member_answers, vote_all  # noqa: E402
try:  # the run's own settings in one MemberRun, since answer_members takes at most 8 parameters
    from stages.core.answer.ensemble import MemberRun  # noqa: E402
except ImportError:
    MemberRun = None
try:  # the vote: section's params, before the vote rules became constants
    from stages.core.answer.voting import VoteParams  # noqa: E402,F811
except ImportError:
    VoteParams = globals().get("VoteParams")

MEMBER_COLUMNS = ("question_id", "answer", "answer_value", "answer_unit", "ref_id", "explanation",
                  "supporting_materials", "is_blank", "attempts", "prompt_tokens", "completion_tokens", "cache_hits",
                  "model", "seed", "grounded", "prompt_evaluated", "skipped", "shared")
SETS = {"dev": "data/wattbot/dev_QA.csv", "train": "data/wattbot/train_QA.csv"}
CONTEXTS = {"dev": "dev-3828c120720c.parquet", "train": "train-c2655e562750.parquet"}  # the default retrieval's


def fake_reply(text: str, finish_reason: str = "stop", token_logprobs: list[Any] | None = None) -> Completion:
    """A reply with fixed costs (the fingerprints must not depend on timing)."""
    return Completion(text=text, prompt_tokens=100, completion_tokens=10, finish_reason=finish_reason,
                      token_logprobs=token_logprobs, prompt_evaluated=100)


def _h(*parts: object) -> int:
    return int(hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:12], 16)


class FakeLLM:
    """Replies that depend only on the request; records every request's fingerprint."""

    max_concurrency = 1

    def __init__(self) -> None:
        self.requests: list[str] = []

    def complete(self, messages, *, temperature, seed, max_tokens, response_format=None, top_logprobs=0):
        req = json.dumps([messages, temperature, seed, max_tokens, response_format, top_logprobs], sort_keys=True)
        self.requests.append(hashlib.sha256(req.encode()).hexdigest())
        h = _h(req)
        schema = ((response_format or {}).get("json_schema") or {}).get("schema") or {}
        props = schema.get("properties", {})
        user = messages[-1]["content"] if isinstance(messages[-1]["content"], str) else ""
        if h % 11 == 0:  # an unusable reply: the reader retries with the wider context
            return fake_reply(text="", finish_reason="length")
        if "units" in props:
            return self._typed(h, props, user, bool(top_logprobs))
        if "answer_value" in props:  # the free reader
            ids = ((props.get("ref_id") or {}).get("items") or {}).get("enum") or []
            nums = re.findall(r"\d+(?:\.\d+)?", user)
            value = nums[h % len(nums)] if nums else "is_blank"
            data = {"explanation": "quote", "answer": value, "answer_value": value,
                    "ref_id": [ids[h % len(ids)]] if ids else []}
            return fake_reply(text=json.dumps(data))
        return fake_reply(text=json.dumps({"queries": ["a query"]}))

    def _typed(self, h: int, props: dict[str, Any], user: str, logprobs: bool) -> fake_reply:
        units = props["units"]["items"].get("enum") or [1]
        k = units[h % len(units)]
        m = re.search(rf"^\[{k}\] [^:]*: (.*?)(?=^\[\d+\] |\Z)", user, re.M | re.S)
        text = m.group(1) if m else ""
        nums = re.findall(r"\d+(?:\.\d+)?", text) or ["1"]
        data: dict[str, Any] = {"units": [k]}
        if "value" in props:
            v = nums[(h // 7) % len(nums)]
            is_number = props["value"].get("type") == "number" or "number" in json.dumps(props["value"])[:40]
            data["value"] = float(v) if is_number and props["value"].get("type") == "number" else v
        if "low" in props:
            lo = float(nums[0]); hi = float(nums[-1])
            data["low"], data["high"] = min(lo, hi), max(lo, hi)
        if "answer" in props:
            if props["answer"].get("type") == "boolean":
                data["answer"] = bool(h % 2)
            else:
                data["answer"] = " ".join(text.split()[:3]) or "none"
        if "quote" in props:
            data["quote"] = text[:40]
        body = json.dumps(data)
        logs = None
        if logprobs and isinstance(data.get("answer"), bool):
            t = -0.2 - (h % 5) / 10
            f = -0.3 - (h % 7) / 10
            logs = [["{", []], ['"answer"', []], [str(data["answer"]).lower(), [["true", t], ["false", f]]]]
        return fake_reply(text=body, token_logprobs=logs)


def fingerprint(set_name: str, params: dict[str, Any]) -> dict[str, Any]:
    questions = read_questions(SETS[set_name])
    ctx = pl.read_parquet(ROOT / "bench" / "results" / "answer_eval" / "contexts" / CONTEXTS[set_name])
    meta = read_metadata(params["data"]["metadata"])
    ap = section(AnswerParams, "answer", params)
    ens = section(EnsembleParams, "ensemble", params)
    vp = [section(VoteParams, "vote", params)] if VoteParams is not None else []  # the vote's params, if any
    llm = FakeLLM()
    corpus_ids = set(meta["id"].to_list())
    if MemberRun is not None:
        rows = answer_members(llm, questions, context_blocks(ctx), ap, ens,
                              MemberRun("fake", corpus_ids, desc=set_name))
    else:  # model, corpus ids and desc as parameters of their own
        rows = answer_members(llm, "fake", questions, context_blocks(ctx), ap, ens, corpus_ids,
                              desc=set_name, **{"vote": p for p in vp})
    frames = [pl.DataFrame(m, schema_overrides=MEMBER_SCHEMA_OVERRIDES) for m in rows]
    voted = vote_all([member_answers(f) for f in frames], questions["id"].to_list(), *vp)
    sub = build_submission(questions, voted, doc_urls(meta))
    # the answer rows' columns of 8411665 (later columns, e.g. the report's raw replies, are additions);
    # latency is the fake's constant anyway
    member_json = [f.select([c for c in MEMBER_COLUMNS if c in f.columns]).write_json() for f in frames]
    sha = lambda s: hashlib.sha256(s.encode()).hexdigest()  # noqa: E731
    return {"questions": questions.height, "requests": len(llm.requests),
            "requests_sha256": sha("\n".join(llm.requests)),
            "members_sha256": [sha(m) for m in member_json],
            "submission_sha256": sha(sub.write_csv()),
            "answered": int((sub["answer_value"] != "is_blank").sum())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--n", type=int, nargs="+", default=[1, 3], help="ensemble sizes to fingerprint")
    ap.add_argument("--diff", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args()
    if args.diff:
        a, b = (json.loads(p.read_text()) for p in args.diff)
        same = a == b
        for key in sorted(set(a) | set(b)):
            print(f"{key}: {'same' if a.get(key) == b.get(key) else 'DIFFERENT'} {b.get(key, {}).get('requests')}"
                  f" requests, {b.get(key, {}).get('answered')} answered")
        print("identical" if same else "DIFFERENT")
        return 0 if same else 1
    params = load_params(ROOT / "params.yaml")
    out = {}
    for n in args.n:
        params["ensemble"]["n"] = n
        for s in SETS:
            out[f"{s}-n{n}"] = fingerprint(s, params)
            print(s, n, out[f"{s}-n{n}"], flush=True)
    if args.out:
        args.out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
