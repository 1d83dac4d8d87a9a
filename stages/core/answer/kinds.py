"""The kind of answer a question wants, decided in code from the question and its answer unit.

With the unit (WattBot's questions files) `question_kind` decides; where the questions file
gives no unit (no answer_unit column, or a blank cell) `question_type` infers the kind and the
unit from the question alone (`answer.infer_unit`): numeric with the unit the question names
(the tables of stages/core/common/vocab.py), True/False for yes/no questions, a range, a name
(text), or a free explanation ("why", "explain", "what drove", ...).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, get_args

from stages.core.common.values import BLANK
from stages.core.common.vocab import QUANTITY_UNITS, QUESTION_RATE_UNITS, QUESTION_RATIO_UNITS, QUESTION_UNIT_WORDS

Kind = Literal["true_false", "numeric", "range", "text", "explain"]
KINDS: tuple[str, ...] = get_args(Kind)
InferUnit = Literal["auto", "always", "never"]
INFER_UNIT = get_args(InferUnit)

TRUE_FALSE = re.compile(r"\s*true\s+or\s+false\b", re.IGNORECASE)
# "between 2019 and 2023" is a period, not a range answer: only "range" or "between (roughly) what"
_RANGE = re.compile(r"\brange\b|\bbetween\s+(?:roughly\s+|about\s+)?what\b", re.IGNORECASE)
# wording that asks for a value computed from stated ones (a difference, ratio, sum, percent change or
# conversion) rather than one the context states: "how many more", "by what factor", "combined", ...
_COMPUTE = re.compile(
    r"\bhow (?:many|much) (?:more|less|fewer|cheaper|larger|smaller|higher|lower|greater|longer|shorter)\b"
    r"|\bhow many times\b|\bby how (?:many|much)\b|\bby what (?:factor|percentage|percent|multiple)\b"
    r"|\bpercent(?:age)? change\b|\bdifference\b|\bratio\b|\bcombined\b|\badding\b|\bsum of\b"
    r"|\bconverted to\b"
    # a unit between "how many" and the comparison ("how many US dollars more per hour", "how many dollars
    # cheaper"), and a saving "compared with" another value
    r"|\bhow (?:many|much) (?:[\w$.-]+ ){1,3}(?:more|less|fewer|cheaper|larger|smaller|higher|lower|greater|longer|"
    r"shorter)\b|\b(?:save|saved|saving)\b.*\bcompared (?:with|to)\b", re.IGNORECASE)


def question_kind(question: str, unit: str) -> Kind:
    """The answer's type, from the question and its answer unit (never from the model)."""
    if TRUE_FALSE.match(question):
        return "true_false"
    if not unit or unit == BLANK:
        return "text"
    if _RANGE.search(question):
        return "range"
    return "numeric"


def asks_to_compute(question: str) -> bool:
    """Whether a numeric question's wording asks for a computed value (difference, ratio, sum,
    percent change, conversion): about half of the numeric answers the 1.5B missed are stated
    nowhere in the context, so no copied number can be right."""
    return bool(_COMPUTE.search(question))


# ---- the kind and unit from the question alone (answer.infer_unit)

_WH = r"\b(?:what|which|how|who|whom|whose|where|when)\b"
# a yes/no question: an auxiliary verb first ("Is ...?", "Did ...?"); one offering a choice ("Is A or B
# larger?") or asking a wh-question after a clause ("Had it ..., what ...?") asks for something else
_YES_NO = re.compile(r"^\s*(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should|may|might|must)"
                     r"\s+\S", re.IGNORECASE)
_CHOICE = re.compile(r"\bor\b(?!\s+not\b)|" + _WH, re.IGNORECASE)
_EXPLAIN = re.compile(
    r"^\s*(?:why|explain|describe|summari[sz]e|discuss|how (?:did|does|do|has|have|is|are|was|were|will|would|can|"
    r"could)\b)|\bwhat (?:drove|drives|driven|caused|causes|contributed|explains|were the (?:main |primary |key )?"
    r"(?:reasons|drivers|factors|causes)|are the (?:main |primary |key )?(?:reasons|drivers|factors|causes|risks))\b"
    r"|\bwhat (?:factors|reasons|drivers)\b|\bfor what reasons?\b|\bhow and why\b|\bin what ways?\b",
    re.IGNORECASE)
# a question for a name: "which ...", "who ...", "what is the name/term ...", "what dataset ..."
_NAME = re.compile(
    r"^\s*(?:which|who|whom|whose|where)\b|\bwhat (?:is|was|are|were) the (?:name|term|title|acronym|abbreviation|"
    r"version)\b"
    r"|\bwhat (?:dataset|model|method|platform|library|tool|company|organi[sz]ation|framework|benchmark|term|name|"
    r"country|city|region|type|kind)\b", re.IGNORECASE)
# wording that asks for a number ("how many", "how much", "what is the total ...")
_NUMERIC = re.compile(
    r"\bhow (?:many|much|long|far|large|big|fast|heavy|high|often|old)\b|\bwhat (?:number|amount|count|total|size|"
    r"value|level|quantity)\b|\bwhat (?:was|is|were|are) the (?:\w+ ){0,3}(?:number|amount|count|total|size|value|"
    r"level|quantity|rate|ratio|cost|price|percentage|share)\b|\bnumber of\b|\bamount of\b",
    re.IGNORECASE)
# an explicit unit: "in kWh", "(in percent)", "(GB)", "expressed in days", "in millions of USD"
_UNIT_LEAD = re.compile(r"(?:\bin|\bexpressed in|\bmeasured in|\bin units of|\bin terms of|\bas)\s+"
                        r"(?:(millions?|billions?|thousands?) of\s+)?$", re.IGNORECASE)
_PAREN_UNIT = re.compile(r"\(\s*in\s+([A-Za-z][\w /-]{0,24}?)\s*\)")
_COUNT = re.compile(r"\b(?:how many|number of) (?:more |fewer |additional |total |different |distinct |separate |"
                    r"individual )?((?:[\w.$/-]+ ){0,3}?[\w.$/-]+?)(?= (?:were|was|did|does|do|are|is|have|has|had|"
                    r"would|could|can|will|of|in|per|from|for|to|on|at|that|which|across|during|by|with|than|after|"
                    r"before|under|when|worldwide|globally|annually|overall|each|a|an)\b|[,?;)]|$)", re.IGNORECASE)
_STATED = re.compile(r"(?<![\w.])\d[\d,.]*\s*-?\s*$")  # a unit right after a number is given, not asked ("79 hours")
_STOP_NOUNS = frozenset({"more", "fewer", "times", "of", "the", "a", "an", "total", "widely", "used"})
_QUANTITY_WINDOW = 7  # words after "what"/"how much" searched for the quantity asked about


@dataclass(frozen=True)
class QuestionType:
    """What a question asks for: its kind and answer unit (BLANK when it has none), and whether
    they were inferred from the question (True) or come from the questions file's unit."""

    kind: Kind
    unit: str = BLANK
    inferred: bool = False


class _Units:
    """The unit words (vocab.QUESTION_UNIT_WORDS plus answer.unit_words) and their regex."""

    def __init__(self, extra: Mapping[str, str] | None = None) -> None:
        self.words = {**QUESTION_UNIT_WORDS, **{k.strip().lower(): v for k, v in (extra or {}).items() if k.strip()}}
        alts = sorted((re.escape(w) for w in self.words), key=len, reverse=True)
        self.regex = re.compile(r"(?<![\w$€£-])(" + "|".join(alts) + r")(?![\w/-])", re.IGNORECASE)

    def find(self, text: str, start: int = 0, end: int | None = None) -> list[re.Match[str]]:
        """Unit words in text[start:end]; a unit's own abbreviation of 3 letters or fewer only as the
        unit writes it, or in lower case from 3 letters ("ML.ENERGY" is no mL, "w" no W; "usd" is USD)."""
        out = []
        for m in self.regex.finditer(text, start, len(text) if end is None else end):
            word = m.group(1)
            unit = self.words[word.lower()]
            if len(word) <= 3 and word.isalpha() and unit.lower() == word.lower() and word != unit \
                    and (word != word.lower() or len(word) < 3):
                continue  # "w", "j": only as the unit writes them
            out.append(m)
        return out

    def unit(self, m: re.Match[str]) -> str:
        return self.words[m.group(1).lower()]


_DEFAULT_UNITS = _Units()


@lru_cache(maxsize=8)
def _extended(extra: tuple[tuple[str, str], ...]) -> _Units:
    return _Units(dict(extra))


def _units(extra: Mapping[str, str] | None) -> _Units:
    return _extended(tuple(sorted(extra.items()))) if extra else _DEFAULT_UNITS


def _explicit_unit(q: str, units: _Units) -> str | None:
    """A unit the question names as the answer's: "in kWh", "(GB)", "(in samples)", "in millions of USD"."""
    for m in units.find(q):
        lead = _UNIT_LEAD.search(q[:m.start()])
        unit = units.unit(m)
        if lead:
            if lead.group(1) and unit == "USD":
                return f"{lead.group(1).lower().rstrip('s')} USD"
            return unit
        if re.search(r"\(\s*(?:in\s+)?$", q[:m.start()]) and re.match(r"\s*\)", q[m.end():]):
            return unit
    paren = _PAREN_UNIT.search(q)
    return paren.group(1).strip() if paren else None


def _quantity_unit(q: str) -> str | None:
    """The unit of the quantity asked about: the last quantity word of the few after "what" /
    "how much" ("what router power" -> W), else the first anywhere."""
    words = re.findall(r"[a-z]+", q.lower())
    for i, w in enumerate(words):
        if w == "what" or (w == "much" and i and words[i - 1] == "how"):
            found = [x for x in words[i + 1:i + 1 + _QUANTITY_WINDOW] if x in QUANTITY_UNITS]
            if found:
                return QUANTITY_UNITS[found[-1]]
    return next((QUANTITY_UNITS[w] for w in words if w in QUANTITY_UNITS), None)


def infer_unit(question: str, unit_words: Mapping[str, str] | None = None) -> str:
    """The answer unit a question asks for, from its wording alone (BLANK when it names none); a
    price asked per hour ("hourly price") is USD/h (vocab.QUESTION_RATE_UNITS)."""
    unit = _infer_unit(question, unit_words)
    if unit == "USD":
        return next((u for p, u in QUESTION_RATE_UNITS if re.search(p, question, re.IGNORECASE)), unit)
    return unit


def _infer_unit(question: str, unit_words: Mapping[str, str] | None = None) -> str:
    """The answer unit a question asks for, from its wording alone (BLANK when it names none).

    In order: an explicit unit ("in kWh", "(GB)", "expressed in days"); a ratio's wording
    ("what percentage", "by what factor"); "how many <unit or noun>" (a count of that noun);
    a unit word not stated with a number ("79 hours" is given, not asked); the quantity asked
    about ("what ... cost" -> USD)."""
    units = _units(unit_words)
    q = question.replace("\u2019", "'")
    explicit = _explicit_unit(q, units)
    if explicit:
        return explicit
    low = q.lower()
    for pattern, unit in QUESTION_RATIO_UNITS:
        if re.search(pattern, low):
            return unit
    count = _COUNT.search(q)
    if count:
        for m in units.find(q, count.start(1)):
            if m.start() >= count.end(1):
                break
            if not _STATED.search(q[:m.start()]):
                return units.unit(m)
        nouns = [w for w in count.group(1).split() if w.lower() not in _STOP_NOUNS and not _STATED.search(w)
                 and w.lower() not in units.words]
        if nouns:
            return nouns[-1]
    for m in units.find(q):
        if not _STATED.search(q[:m.start()]) and len(m.group(1)) > 2:
            return units.unit(m)
    return _quantity_unit(q) or BLANK


def _asks_number(question: str, units: _Units) -> tuple[bool, bool]:
    """(plainly: "how many", a unit, a ratio's wording; or only by a quantity word after "what":
    "what router power", "what average carbon intensity", which "what drove ... margin" also has)."""
    if _NUMERIC.search(question) or _explicit_unit(question, units) \
            or any(re.search(p, question.lower()) for p, _ in QUESTION_RATIO_UNITS):
        return True, True
    return False, bool(re.search(r"\bwhat (?:\w[\w-]* ){0,5}?(?:" + "|".join(QUANTITY_UNITS) + r")\b", question,
                                 re.IGNORECASE))


def infer_type(question: str, unit_words: Mapping[str, str] | None = None) -> QuestionType:
    """The kind and unit of a question from its wording alone (no answer unit given)."""
    if TRUE_FALSE.match(question):
        return QuestionType("true_false", BLANK, True)
    if _YES_NO.match(question) and not _CHOICE.search(question):
        return QuestionType("true_false", BLANK, True)
    units = _units(unit_words)
    plainly, numeric = _asks_number(question, units)
    if _EXPLAIN.search(question) and not plainly:
        return QuestionType("explain", BLANK, True)
    if _NAME.search(question) and not re.search(r"\bhow (?:many|much)\b", question, re.IGNORECASE):
        return QuestionType("text", BLANK, True)
    if numeric or _RANGE.search(question):
        return QuestionType("range" if _RANGE.search(question) else "numeric", infer_unit(question, unit_words), True)
    return QuestionType("text", BLANK, True)


def question_type(question: str, unit: str | None, infer: str = "auto",
                  unit_words: Mapping[str, str] | None = None) -> QuestionType:
    """The question's kind and unit under ``answer.infer_unit``: never = from the questions file's
    unit as always (`question_kind`; no unit is a name); auto = inferred from the question only
    where the file gives no unit (no answer_unit column, or a blank cell; WattBot's ``is_blank``
    is a given unit: a name or True/False); always = inferred for every question (measuring)."""
    given = (unit or "").strip()
    if infer == "always" or (infer == "auto" and not given):
        return infer_type(question, unit_words)
    unit = given or BLANK
    return QuestionType(question_kind(question, unit), unit)
