"""Answering one question from its retrieved context, with retries on abstention.

The prompt puts the context first and the question last (the paper's +80%
ordering, and it lets the server reuse the cached context prefix across ensemble
members and retries). The reply is structured JSON, constrained by a JSON schema
whose `ref_id` items may only be doc ids present in the context. Everything the
model returns is parsed defensively and normalised in code; a malformed,
truncated or empty reply counts as an abstention and is retried.
"""
from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, get_args

import polars as pl
from tqdm import tqdm

from stages.core.concurrency import ordered_map
from stages.core.llm import LLM
from stages.core.normalize import normalize_value
from stages.core.reader import TRUE_FALSE, Kind, question_kind
from stages.core.table_records import table_records
from stages.core.types import BLANK, Answer
from stages.core.voting import VoteParams, vote_decided

KINDS: tuple[str, ...] = get_args(Kind)  # question kinds (reader.question_kind)

log = logging.getLogger("treerag.answer")


@dataclass
class AnswerParams:
    """The `answer:` section of params.yaml."""

    reader: str = "typed"  # free: the explained JSON reply | typed: stages/core/reader.py
    context_first: bool = True
    temperature: float = 0.0
    max_tokens: int = 64
    max_retries: int = 1
    retry_k_factor: float = 2.0
    # typed reader only
    number_format: str = "json"  # json: a JSON number | text: as the context writes it | expression: arithmetic
    # the number format of numeric questions worded to compute ("how many more", "by what factor", ...);
    # "" = number_format (measured: expression +0.006 on dev 179, train unchanged; README)
    compute_format: str = "expression"
    # question kinds the typed reader answers; the others keep the free reader
    typed_kinds: list[str] = field(default_factory=lambda: ["true_false", "numeric", "range", "text"])
    retry_ungrounded: bool = False  # an ungrounded answer is retried with the wider context
    # never: the schema has no null, so the model always answers | model: blank when it says null |
    # ungrounded: also blank when the answer is not found in the context
    abstain: str = "never"
    tf_logprobs: bool = True  # True/False from calibrated token probabilities
    quote_first: bool = False  # the reply copies the words that state the answer before giving it
    restate_numbers: bool = True  # a copied number gets back the magnitude/unit the context writes next to it
    narrow_pointers: bool = True  # a grounded answer points only at the pointed units that state it
    table_records: bool = True  # well-formed markdown tables are shown as records, "row: column = value; ..."
    demos: list[str] = field(default_factory=lambda: ["d303", "d603", "d317", "d320", "d416"])  # labelled question ids shown as worked examples
    # question kinds shown the worked examples; the others get the system prompt alone (measured: numeric
    # answers read better without them, True/False and names worse)
    demo_kinds: list[str] = field(default_factory=lambda: ["true_false", "range", "text"])
    demo_file: str = "data/wattbot/dev_QA.csv"

    def validate(self) -> None:
        from stages.core.params import ParamError
        from stages.core.reader import NUMBER_FORMATS

        if self.reader not in ("free", "typed"):
            raise ParamError(f"params.yaml: answer.reader={self.reader!r} must be free or typed")
        for name, kinds in (("typed_kinds", self.typed_kinds), ("demo_kinds", self.demo_kinds)):
            bad = [k for k in kinds if k not in KINDS]
            if bad:
                raise ParamError(f"params.yaml: answer.{name} has unknown kinds {bad}: use true_false, numeric, "
                                 "range, text")
        if self.number_format not in NUMBER_FORMATS:
            raise ParamError(f"params.yaml: answer.number_format={self.number_format!r} must be json, text or "
                             "expression")
        if self.compute_format not in ("", *NUMBER_FORMATS):
            raise ParamError(f"params.yaml: answer.compute_format={self.compute_format!r} must be empty, json, "
                             "text or expression")
        if self.abstain not in ("never", "model", "ungrounded"):
            raise ParamError(f"params.yaml: answer.abstain={self.abstain!r} must be never, model or ungrounded")
        if self.max_retries < 0:
            raise ParamError("params.yaml: answer.max_retries must be >= 0")
        if self.retry_k_factor < 1.0:
            raise ParamError(f"params.yaml: answer.retry_k_factor={self.retry_k_factor} must be >= 1")


@dataclass
class EnsembleParams:
    """The `ensemble:` section of params.yaml: member i uses seed `seed + i`."""

    n: int = 1
    seed: int = 0
    # member i reads the context as views[i % len(views)]: as_is | reversed (units in reverse
    # order) | wider (the first retry's larger context)
    views: list[str] = field(default_factory=lambda: ["reversed", "reversed", "as_is"])
    # typed reader: member i samples at temperatures[i % len]; empty = answer.temperature for all
    temperatures: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    # typed reader: member i writes numbers as number_formats[i % len] (json | text | expression);
    # empty = answer.number_format for all. Members that differ in format, not only in sampling noise
    number_formats: list[str] = field(default_factory=list)
    # typed reader: member i shows the worked examples to extra_demo_kinds[i % len] besides
    # answer.demo_kinds; empty = answer.demo_kinds alone for all. Members that differ in what they were shown
    extra_demo_kinds: list[list[str]] = field(default_factory=lambda: [[], ["numeric"], []])
    # ask member i only while the vote of members 0..i-1 could still change (voting.vote_decided):
    # the same submission as asking every member, for fewer calls
    early_stop: bool = True

    def validate(self) -> None:
        from stages.core.params import ParamError
        from stages.core.reader import NUMBER_FORMATS

        if self.n < 1:
            raise ParamError(f"params.yaml: ensemble.n={self.n} must be >= 1")
        bad = [v for v in self.views if v not in VIEWS]
        if bad or not self.views:
            raise ParamError(f"params.yaml: ensemble.views={self.views!r}: each must be one of {VIEWS}")
        bad = [f for f in self.number_formats if f not in NUMBER_FORMATS]
        if bad:
            raise ParamError(f"params.yaml: ensemble.number_formats={self.number_formats!r}: each must be json, "
                             "text or expression")
        for kinds in self.extra_demo_kinds:
            if not isinstance(kinds, list) or any(k not in KINDS for k in kinds):
                raise ParamError(f"params.yaml: ensemble.extra_demo_kinds={self.extra_demo_kinds!r}: each member's "
                                 f"entry must be a list (maybe empty) of question kinds from {KINDS}")


VIEWS = ("as_is", "reversed", "wider")


def member_view(contexts: Sequence[Sequence["ContextBlock"]], view: str) -> list[list["ContextBlock"]]:
    """The context levels a member reads: as retrieved, each level reversed, or starting one level wider."""
    levels = [list(c) for c in contexts]
    if view == "reversed":
        return [c[::-1] for c in levels]
    if view == "wider" and len(levels) > 1:
        return levels[1:]
    return levels


@dataclass
class ContextBlock:
    """One retrieved unit as the prompt shows it."""

    doc_id: str
    text: str
    media: str | None = None  # "table" | "image" for the Referenced media part


@dataclass
class AnswerOutcome:
    """An answer plus what producing it cost."""

    answer: Answer
    attempts: int
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cache_hits: int = 0
    raw: list[str] = field(default_factory=list)
    prompt_evaluated: int = 0  # prompt tokens the server evaluated (not served from its prompt cache)
    skipped: bool = False  # not asked: the earlier members had decided the vote (ensemble.early_stop)
    shared: int = 0  # attempts answered by an earlier member's identical greedy request (no call)


SYSTEM = (
    "You answer questions about AI energy use, emissions, water and cost using ONLY the given context "
    "from research papers and reports. You cite the ref_id of the blocks that hold the answer. If the "
    "context does not contain the answer, you abstain with is_blank."
)

RULES = """Rules:
- Use only the context above. If it does not contain the answer, set answer, answer_value and explanation to "is_blank" and ref_id to [].
- answer_value: a number when the question asks for a quantity (digits only, no unit, no thousands separators, expressed in the answer unit); [low,high] for a range; 1 for True and 0 for False; otherwise a short name or phrase copied from the context.
- answer: the answer as a short sentence or phrase with its unit.
- ref_id: the ref_id(s) of the block(s) that contain the answer.
- explanation: first quote the exact words of the context that give the answer."""


def format_context(blocks: Sequence[ContextBlock]) -> str:
    """`[ref_id=doc] text` blocks; tables and image captions under 'Referenced media'."""
    text = [f"[ref_id={b.doc_id}] {b.text}" for b in blocks if not b.media]
    media = [f"[ref_id={b.doc_id}] ({b.media}) {b.text}" for b in blocks if b.media]
    out = "Context:\n" + "\n\n".join(text)
    if media:
        out += "\n\nReferenced media:\n" + "\n\n".join(media)
    return out


def build_messages(question: str, unit: str, blocks: Sequence[ContextBlock], context_first: bool) -> list[dict[str, str]]:
    """Chat messages for one attempt."""
    unit_line = f"Answer unit: {unit}" if unit and unit != BLANK else "Answer unit: none (text or True/False answer)"
    q = f"Question: {question}\n{unit_line}"
    ctx = format_context(blocks)
    body = f"{ctx}\n\n{q}\n\n{RULES}" if context_first else f"{q}\n\n{RULES}\n\n{ctx}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": body}]


def response_format(doc_ids: Sequence[str]) -> dict[str, Any]:
    """JSON schema for the reply; ref_id items restricted to the context's doc ids."""
    ref_items: dict[str, Any] = {"type": "string", "enum": sorted(set(doc_ids))} if doc_ids else {"type": "string"}
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "answer",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {
                    "explanation": {"type": "string"},
                    "answer": {"type": "string"},
                    "answer_value": {"type": "string"},
                    "ref_id": {"type": "array", "items": ref_items},
                },
                "required": ["explanation", "answer", "answer_value", "ref_id"],
            },
        },
    }


def parse_reply(text: str) -> dict[str, Any] | None:
    """The reply's JSON object, or None when it is empty, truncated or not JSON."""
    text = (text or "").strip()
    if not text:
        return None
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", text)
    for candidate in (text, text[text.find("{") : text.rfind("}") + 1] if "{" in text else ""):
        try:
            data = json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    return None


def to_answer(question_id: str, unit: str, data: dict[str, Any] | None, allowed_ids: set[str],
              blocks: Sequence[ContextBlock]) -> Answer:
    """Normalise a parsed reply into an Answer (blank when unusable)."""
    if not data:
        return Answer(question_id, answer_unit=unit or BLANK)
    value = normalize_value(data.get("answer_value"), unit)
    if unit and unit != BLANK and not _is_number_or_range(value):
        # small models put the number in `answer` and a word ("high", the unit) in answer_value
        from_answer = normalize_value(data.get("answer"), unit)
        if _is_number_or_range(from_answer):
            value = from_answer
    if value == BLANK:
        return Answer(question_id, answer_unit=unit or BLANK)
    refs = data.get("ref_id") or []
    if isinstance(refs, str):
        refs = [refs]
    lower = {a.lower(): a for a in allowed_ids}
    refs = list(dict.fromkeys(lower[r.strip().lower()] for r in refs if isinstance(r, str) and r.strip().lower() in lower))
    explanation = str(data.get("explanation") or "").strip() or BLANK
    answer = str(data.get("answer") or "").strip() or value
    return Answer(question_id, answer=answer, answer_value=value, answer_unit=unit or BLANK, ref_id=refs,
                  explanation=explanation, supporting_materials=supporting_quote(refs, value, explanation, blocks))


_NUMBER_OR_RANGE = re.compile(r"-?\d+(\.\d+)?|\[-?\d+(\.\d+)?,-?\d+(\.\d+)?\]")


def _is_number_or_range(value: str) -> bool:
    return _NUMBER_OR_RANGE.fullmatch(value) is not None




def true_false_value(value: str, answer: str) -> str:
    """1/0 for a True-or-False question even when the model answered with a sentence
    ("It is false that ..."): seen in the 1.5B model's train_QA run (q102)."""
    if value in ("0", "1"):
        return value
    text = f"{value} {answer}".lower()
    has_false = re.search(r"\b(false|incorrect|not true)\b", text) is not None
    has_true = re.search(r"\btrue\b", text.replace("not true", "")) is not None
    if has_false and not has_true:
        return "0"
    if has_true and not has_false:
        return "1"
    return value


_CITATION = re.compile(r"\s*\[\d+(?:[,–-]\s*\d+)*\]")


def text_value(value: str, answer: str) -> str:
    """The name or phrase for a question with no answer unit (not True/False).

    The 1.5B model often writes the name in `answer` and a stray number in
    answer_value ("ML.ENERGY Benchmark" / "0", "Financial Sentiment Analysis [18]" /
    "5842": 3 of train_QA's 4 such questions). A number that the answer text does not
    contain is replaced by that text, without citation marks; "8 GPUs" / "8" stays 8."""
    phrase = _CITATION.sub("", answer).strip().rstrip(".").strip()
    if not _is_number_or_range(value) or not re.search(r"[A-Za-z]", phrase):
        return value
    numbers = re.findall(r"-?\d+(?:\.\d+)?", value)
    plain = phrase.replace(",", "")
    if any(re.search(rf"(?<![\d.]){re.escape(n)}(?![\d])", plain) for n in numbers):
        return value
    return phrase


def supporting_quote(refs: Sequence[str], value: str, explanation: str, blocks: Sequence[ContextBlock],
                     max_chars: int = 300) -> str:
    """The cited context sentence that best shows the answer (for the submission's supporting_materials)."""
    cited = [b for b in blocks if b.doc_id in refs] or list(blocks)
    needles = [v for v in re.findall(r"[\d.]+", value)] or [value.lower()]
    for b in cited:
        for sent in re.split(r"(?<=[.!?])\s+", b.text):
            if any(n and n in sent.lower() for n in needles):
                return sent.strip()[:max_chars]
    return explanation[:max_chars] if explanation != BLANK else BLANK


def answer_question(
    llm: LLM,
    question_id: str,
    question: str,
    unit: str,
    contexts: Sequence[Sequence[ContextBlock]],
    params: AnswerParams,
    seed: int,
    corpus_ids: set[str],
) -> AnswerOutcome:
    """Ask with context attempt 0; on abstention retry with the wider contexts 1..max_retries."""
    out = AnswerOutcome(Answer(question_id, answer_unit=unit or BLANK), attempts=0)
    for attempt, blocks in enumerate(contexts[: params.max_retries + 1]):
        doc_ids = list(dict.fromkeys(b.doc_id for b in blocks))
        reply = llm.complete(
            build_messages(question, unit, blocks, params.context_first),
            temperature=params.temperature,
            seed=seed,
            max_tokens=params.max_tokens,
            response_format=response_format(doc_ids),
        )
        _add_cost(out, reply)
        data = parse_reply(reply.text) if reply.finish_reason != "length" else None
        if data is None:
            log.warning("%s: unusable reply on attempt %d (finish=%s): %r", question_id, attempt + 1,
                        reply.finish_reason, reply.text[:120])
        ans = to_answer(question_id, unit, data, set(doc_ids) | corpus_ids, blocks)
        if TRUE_FALSE.match(question) and not ans.is_blank:
            ans.answer_value = true_false_value(ans.answer_value, ans.answer)
        elif (not unit or unit == BLANK) and not ans.is_blank:
            ans.answer_value = text_value(ans.answer_value, ans.answer)
        out.answer = ans
        if not ans.is_blank:
            break
    return out


def _add_cost(out: AnswerOutcome, reply: Any, shared: bool = False) -> None:
    """Count one attempt; a reply ``shared`` with an earlier member (the same greedy request) cost nothing."""
    out.attempts += 1
    out.raw.append(reply.text)
    if shared:
        out.shared += 1
        return
    out.prompt_tokens += reply.prompt_tokens
    out.completion_tokens += reply.completion_tokens
    out.latency_s += reply.latency_s
    out.cache_hits += reply.cached
    out.prompt_evaluated += reply.prompt_evaluated if reply.prompt_evaluated >= 0 else reply.prompt_tokens


TF_TOP_LOGPROBS = 10


@dataclass
class TypedSetup:
    """What every typed-reader call of a run shares: the prefixes and the True/False prior.

    ``prefix`` is the system prompt with the worked examples, for the kinds in ``demo_kinds``;
    ``bare`` the system prompt alone, for the others (None: every kind gets ``prefix``)."""

    prefix: list[dict[str, str]]
    tf_prior: tuple[float, float] | None = None
    bare: list[dict[str, str]] | None = None
    demo_kinds: tuple[str, ...] = ()

    def prefix_for(self, kind: str, extra_kinds: Sequence[str] = ()) -> list[dict[str, str]]:
        """The prefix for a question of ``kind``; ``extra_kinds`` (a member's own) are shown the demos too."""
        shown = kind in self.demo_kinds or kind in extra_kinds
        return self.prefix if self.bare is None or shown else self.bare


def typed_setup(llm: LLM, params: AnswerParams) -> TypedSetup:
    """The prefixes (system prompt, with and without the demonstrations); with tf_logprobs, the
    model's content-free True/False prior."""
    from stages.core import reader
    from stages.core.demos import demo_messages

    system = {"role": "system", "content": reader.SYSTEM}
    prefix = [system, *demo_messages(params.demo_file, params.demos, params.number_format, params.quote_first)]
    setup = TypedSetup(prefix, bare=[system], demo_kinds=tuple(params.demo_kinds))
    if params.tf_logprobs:  # one content-free call per run (then cached)
        msg = reader.user_message(reader.CONTENT_FREE_QUESTION, BLANK, "true_false", reader.CONTENT_FREE_UNITS,
                                  params.number_format)
        reply = llm.complete([*setup.prefix_for("true_false"), {"role": "user", "content": msg}], temperature=0.0,
                             seed=0, max_tokens=24,
                             response_format=reader.response_format("true_false", 1), top_logprobs=TF_TOP_LOGPROBS)
        setup.tf_prior = reader.answer_token_probs(reply.token_logprobs)
        log.info("True/False content-free prior (true, false): %s", setup.tf_prior)
    return setup


@dataclass
class TypedMember:
    """One ensemble member of the typed reader on one question."""

    levels: list[list[ContextBlock]]
    seed: int
    temperature: float
    number_format: str = ""  # "" = answer.number_format
    extra_demo_kinds: tuple[str, ...] = ()  # kinds shown the worked examples besides answer.demo_kinds


def answer_question_typed(llm: LLM, question_id: str, question: str, unit: str, members: Sequence[TypedMember],
                          params: AnswerParams, setup: TypedSetup,
                          greedy: dict[str, Any] | None = None) -> list[AnswerOutcome]:
    """Every member's typed answer to one question (stages/core/reader.py).

    Attempt-major: all members ask with context level 0 before any retries with level 1,
    so the server's cached prompt (demos + context) serves every member and only the
    first pays for evaluating it. A blank or (retry_ungrounded) ungrounded reading is
    retried with the next, wider level; per member the first grounded reading wins, else
    the first non-blank one. A greedy (temperature 0) member whose request is exactly an earlier
    member's at the same level (same view, prefix and format) shares that member's reply instead of
    asking again: the seed does not change a greedy reply. ``greedy`` (request -> reply) carries
    those replies over from an earlier call for other members of the same question.
    """
    from stages.core import reader

    kind = reader.question_kind(question, unit)
    # True/False calls always ask for log-probabilities: the sampled and the calibrated answer then
    # come from the same (cached) call, so tf_logprobs can be switched without new calls
    tf = kind == "true_false"
    computes = kind == "numeric" and bool(params.compute_format) and reader.asks_to_compute(question)
    formats = [params.compute_format if computes else (m.number_format or params.number_format) for m in members]
    outs = [AnswerOutcome(Answer(question_id, answer_unit=unit or BLANK, grounded=False), attempts=0)
            for _ in members]
    readings: list[list[tuple[reader.Reading, list[reader.Unit]]]] = [[] for _ in members]
    done = [False] * len(members)
    greedy = {} if greedy is None else greedy  # greedy requests (with their context level) -> their replies
    for level in range(params.max_retries + 1):
        for m, member in enumerate(members):
            if done[m] or level >= len(member.levels) or not member.levels[level]:
                continue
            units = [reader.Unit(b.doc_id, table_records(b.text) if params.table_records else b.text, b.media)
                     for b in member.levels[level]]
            msg = reader.user_message(question, unit, kind, units, formats[m], params.quote_first)
            messages = [*setup.prefix_for(kind, member.extra_demo_kinds), {"role": "user", "content": msg}]
            response_format = reader.response_format(kind, len(units), number_format=formats[m],
                                                     allow_null=params.abstain != "never", quote=params.quote_first)
            key = json.dumps([messages, response_format], sort_keys=True) if member.temperature == 0 else ""
            shared = key in greedy
            reply = greedy[key] if shared else llm.complete(
                messages, temperature=member.temperature, seed=member.seed, max_tokens=params.max_tokens,
                response_format=response_format, **({"top_logprobs": TF_TOP_LOGPROBS} if tf else {}))
            if key:
                greedy[key] = reply
            _add_cost(outs[m], reply, shared)
            data = reader.parse_json(reply.text) if reply.finish_reason != "length" else None
            if data is None:
                log.warning("%s: unusable reply (finish=%s): %r", question_id, reply.finish_reason, reply.text[:120])
            true_prob = None
            if tf and params.tf_logprobs:
                probs = reader.answer_token_probs(reply.token_logprobs)
                true_prob = reader.calibrated_true_prob(probs, setup.tf_prior) if probs else None
            reading = reader.read_reply(kind, unit, data, units, true_prob, restate_numbers=params.restate_numbers,
                                        narrow_pointers=params.narrow_pointers)
            if not reading.is_blank:
                readings[m].append((reading, units))
                done[m] = reading.grounded or not params.retry_ungrounded
    for m, out in enumerate(outs):
        if not readings[m]:
            continue
        reading, units = next(((r, u) for r, u in readings[m] if r.grounded), readings[m][0])
        if params.abstain == "ungrounded" and not reading.grounded:
            continue
        out.answer = Answer(question_id, answer=reading.value, answer_value=reading.value,
                            answer_unit=unit or BLANK, ref_id=reader.refs_for(reading, units),
                            explanation=reading.expression or BLANK,
                            supporting_materials=reader.quote_for(reading, units), grounded=reading.grounded)
    return outs


def context_blocks(contexts: pl.DataFrame) -> dict[str, list[list[ContextBlock]]]:
    """question_id -> [attempt 0 blocks, attempt 1 blocks, ...] from retrieve's context rows."""
    ctx = contexts.sort("question_id", "attempt", "rank")
    out: dict[str, list[list[ContextBlock]]] = {}
    for (qid, attempt), g in ctx.group_by("question_id", "attempt", maintain_order=True):
        levels = out.setdefault(qid, [])
        while len(levels) <= attempt:
            levels.append([])
        levels[attempt] = [ContextBlock(d, t, m) for d, t, m in g.select("doc_id", "text", "media").iter_rows()]
    return out


MEMBER_SCHEMA_OVERRIDES = {"ref_id": pl.List(pl.String)}


def _nth(values: Sequence[Any], i: int, default: Any) -> Any:
    """Member i's setting from a per-member list that cycles (ensemble.views, temperatures,
    number_formats, extra_demo_kinds); ``default`` when the list is empty."""
    return values[i % len(values)] if values else default


def answer_members(llm: LLM, model: str, questions: pl.DataFrame, contexts: dict[str, list[list[ContextBlock]]],
                   params: AnswerParams, ensemble: EnsembleParams, corpus_ids: set[str],
                   desc: str = "answer", max_concurrency: int | None = None,
                   vote: VoteParams | None = None) -> list[list[dict[str, Any]]]:
    """Every member's answer rows (answers/run_<i>.parquet), questions outer and members inner.

    Questions are the outer loop so that the server reuses the cached context prefix
    and members 1..n-1 pay only for generation; the answer stage and the answer
    benchmark both call this, so they answer exactly alike. Up to `max_concurrency`
    (default: the client's `max_concurrency`, i.e. `llm.max_concurrency`) tasks run at
    once: (question, member) pairs for the free reader, whole questions for the typed
    one; questions shown the worked examples run before the others (one prompt prefix at a
    time for the server), and rows come out in (question, member) order whatever order the
    calls run or finish in, so the output equals a sequential run's. With ``ensemble.early_stop``
    the members of a question are asked in order, the first majority together, and a member is
    skipped (row ``skipped``, no call) once the vote (``vote``, the vote stage's params) is decided.
    """
    stats = getattr(llm, "stats", None)
    workers = max_concurrency if max_concurrency is not None else getattr(llm, "max_concurrency", 1)
    setup = typed_setup(llm, params) if params.reader == "typed" else None
    qs = list(questions.iter_rows(named=True))
    # free reader: one task per (question, member); typed reader: one task per question, whose
    # members run attempt-major so that they share the server's cached prompt
    kinds = {q["id"]: question_kind(q["question"], q.get("answer_unit") or BLANK) for q in qs}
    typed = {qid: setup is not None and kind in params.typed_kinds for qid, kind in kinds.items()}
    early = ensemble.early_stop and ensemble.n > 1
    vote = vote or VoteParams()
    tasks: list[tuple[dict[str, Any], list[int]]] = [
        t for q in qs for t in ([(q, list(range(ensemble.n)))] if typed[q["id"]] or early
                                else [(q, [i]) for i in range(ensemble.n)])]
    # questions that share a prompt prefix run one after another (those shown the demonstrations, then
    # the others), so that the server evaluates each prefix once instead of at every switch; rows are
    # put back in question order afterwards
    order = sorted(range(len(tasks)),
                   key=lambda k: setup is not None and kinds[tasks[k][0]["id"]] not in setup.demo_kinds)

    def row(q: dict[str, Any], res: AnswerOutcome, seed: int) -> dict[str, Any]:
        a = res.answer
        return {
            "question_id": q["id"], "answer": a.answer, "answer_value": a.answer_value,
            "answer_unit": a.answer_unit, "ref_id": a.ref_id, "explanation": a.explanation,
            "supporting_materials": a.supporting_materials, "is_blank": a.is_blank,
            "attempts": res.attempts, "prompt_tokens": res.prompt_tokens,
            "completion_tokens": res.completion_tokens, "latency_s": round(res.latency_s, 3),
            "cache_hits": res.cache_hits, "model": model, "seed": seed, "grounded": a.grounded,
            "prompt_evaluated": res.prompt_evaluated, "skipped": res.skipped, "shared": res.shared,
        }

    def answer_task(task: tuple[dict[str, Any], list[int]]) -> list[dict[str, Any]]:
        q, members = task
        unit = q.get("answer_unit") or BLANK
        ctx = contexts.get(q["id"], [[]])
        greedy: dict[str, Any] = {}  # this question's greedy requests -> replies, shared across ask() calls

        def ask(idx: list[int]) -> list[AnswerOutcome]:
            views = [member_view(ctx, _nth(ensemble.views, i, "as_is")) for i in idx]
            if setup is not None and typed[q["id"]]:
                # a greedy reply does not depend on the seed: greedy members all send ensemble.seed, so a
                # member asking what another member or run asked greedily finds its reply in the cache
                return answer_question_typed(
                    llm, q["id"], q["question"], unit,
                    [TypedMember(v, ensemble.seed + i if (t := _nth(ensemble.temperatures, i, params.temperature))
                                 else ensemble.seed, t, _nth(ensemble.number_formats, i, ""),
                                 tuple(_nth(ensemble.extra_demo_kinds, i, [])))
                     for v, i in zip(views, idx, strict=True)], params, setup, greedy)
            return [answer_question(llm, q["id"], q["question"], unit, v, params, ensemble.seed + i, corpus_ids)
                    for v, i in zip(views, idx, strict=True)]

        if not early:
            results = ask(members)
        else:  # the first majority together (they share the cached prompt), then one at a time
            majority = ensemble.n // 2 + 1
            results = ask(members[:majority])
            for i in members[majority:]:
                if vote_decided([r.answer for r in results], ensemble.n, vote):
                    results.append(AnswerOutcome(Answer(q["id"], answer_unit=unit), attempts=0, skipped=True))
                else:
                    results += ask([i])
        return [row(q, res, ensemble.seed + i) for res, i in zip(results, members, strict=True)]

    with tqdm(total=len(qs) * ensemble.n, desc=desc, unit="call") as bar:
        def progress(done_rows: list[dict[str, Any]]) -> None:
            bar.update(len(done_rows))
            if stats is not None:
                bar.set_postfix(hits=stats.hits, new=stats.misses)

        done_in_order = ordered_map(answer_task, [tasks[k] for k in order], workers, progress)
    done: list[list[dict[str, Any]]] = [[] for _ in tasks]
    for k, task_rows in zip(order, done_in_order, strict=True):
        done[k] = task_rows
    rows: list[list[dict[str, Any]]] = [[] for _ in range(ensemble.n)]
    for (_, members), task_rows in zip(tasks, done, strict=True):
        for i, r in zip(members, task_rows, strict=True):
            rows[i].append(r)
    return rows
