"""The free reader: one explained JSON reply (answer, answer_value, ref_id, explanation), rescued in code.

The prompt puts the context first and the question last (the paper's +80%
ordering, and it lets the server reuse the cached context prefix across ensemble
members and retries). The reply is structured JSON, constrained by a JSON schema
whose `ref_id` items may only be doc ids present in the context. Everything the
model returns is parsed defensively and normalised in code; a malformed,
truncated or empty reply counts as an abstention and is retried with the wider context.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from stages.core.answer.images import with_figures
from stages.core.answer.kinds import TRUE_FALSE
from stages.core.answer.normalize import normalize_value
from stages.core.answer.params import TEMPERATURE, AnswerParams
from stages.core.answer.record import Answer, AnswerOutcome, ContextBlock, add_cost
from stages.core.common.corpus import CorpusParams
from stages.core.common.values import BLANK
from stages.core.llm.protocol import LLM
from stages.core.llm.replies import parse_json_reply

log = logging.getLogger("treerag.answer")

# the free reader's reply length: an explanation that quotes the context, then the answer and its ref_ids
MAX_TOKENS = 384


def free_reader_system(corpus: CorpusParams) -> str:
    """The free reader's system prompt for the corpus of params.yaml's `corpus:` section."""
    return (
        f"You answer questions{corpus.about()} using ONLY the given context "
        f"from {corpus.description}. You cite the ref_id of the blocks that hold the answer. If the "
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


def build_messages(question: str, unit: str, blocks: Sequence[ContextBlock],
                   corpus: CorpusParams | None = None) -> list[dict[str, str]]:
    """Chat messages for one attempt, the context first (`corpus`: the `corpus:` section; None = its
    neutral defaults)."""
    unit_line = f"Answer unit: {unit}" if unit and unit != BLANK else "Answer unit: none (text or True/False answer)"
    body = f"{format_context(blocks)}\n\nQuestion: {question}\n{unit_line}\n\n{RULES}"
    system = free_reader_system(corpus or CorpusParams())
    return [{"role": "system", "content": system}, {"role": "user", "content": body}]


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
    ("It is false that ..."), as the 1.5B model does on some train questions."""
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
            with_figures(build_messages(question, unit, blocks, params.corpus), blocks,
                         params.vision),  # figures' pixels only with a vision endpoint
            temperature=TEMPERATURE,
            seed=seed,
            max_tokens=MAX_TOKENS,
            response_format=response_format(doc_ids),
        )
        add_cost(out, reply)
        data = parse_json_reply(reply.text) if reply.finish_reason != "length" else None
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
