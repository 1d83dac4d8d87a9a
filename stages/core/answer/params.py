"""The `answer:` and `ensemble:` params sections: how each member reads and answers."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from stages.core.answer.kinds import INFER_UNIT, KINDS
from stages.core.common.corpus import CorpusParams, corpus_field
from stages.core.common.vision import VisionParams, vision_field

NumberFormat = Literal["json", "text", "expression", "operation", "named_operation"]
# named_operation: an operation whose reply says what each operand is before copying it
NUMBER_FORMATS = ("json", "text", "expression", "operation", "named_operation")
OPERATION_FORMATS = ("operation", "named_operation")  # the reply names an operation and code computes it
VIEWS = ("as_is", "reversed", "wider")


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
    # "" = number_format; operation: code computes (arithmetic.py; v13: dev +0.012, train +0.018 vs expression)
    compute_format: str = "operation"
    compute_decimals: int = 2  # operation: a computed answer keeps this many decimals (3 significant below 1); -1 = all
    # operation: the question's wording ("how many times", "by what percentage", "how many more") picks difference,
    # ratio or percent change for two operands, not the model
    operation_from_wording: bool = True
    # operation: a ratio whose operands are the ends of a stated range of multipliers ("10–15 times") is that range
    times_ranges: bool = True
    # operation: a b of 0 for a two-number operation the wording asks for ("by how many MW did it grow",
    # "adding") is the number the pointed units state in the answer unit's family beside a
    fill_missing_operand: bool = True
    # question kinds the typed reader answers; the others keep the free reader
    typed_kinds: list[str] = field(default_factory=lambda: ["true_false", "numeric", "range", "text", "explain"])
    # where the kind and unit come from the question alone (kinds.question_type): auto = where the questions
    # file gives no unit (no answer_unit column or a blank cell) | always = every question | never = the file's unit
    infer_unit: str = "auto"
    unit_words: dict[str, str] = field(default_factory=dict)  # more unit words for the inference: "eps" -> "USD"
    explain_max_chars: int = 300  # the explain kind's answer: a sentence or two, at most this long
    explain_min_words: int = 4  # an explanation with fewer words is no answer (retried, else blank)
    explain_max_tokens: int = 160  # the explain kind's max_tokens (a reply of explain_max_chars and pointers)
    retry_ungrounded: bool = False  # an ungrounded answer is retried with the wider context
    # an operation whose second number the model did not find ("sum", a: 7571, b: 0) is retried with the
    # wider context, and a reading with both numbers is preferred
    retry_missing_operand: bool = False
    # operation formats: the instruction names the operation the wording asks for (arithmetic.operation_asked)
    operation_hint: bool = False
    # never: the schema has no null, so the model always answers | model: blank when it says null |
    # ungrounded: also blank when the answer is not found in the context
    abstain: str = "never"
    tf_logprobs: bool = True  # True/False from calibrated token probabilities
    tf_threshold: float = 0.5  # tf_logprobs: the calibrated P(True) from which the answer is True
    quote_first: bool = False  # the reply copies the words that state the answer before giving it
    question_first: bool = False  # typed: the question also before the context (read knowing what to look for)
    restate_numbers: bool = True  # a copied number gets back the magnitude/unit the context writes next to it
    narrow_pointers: bool = True  # a grounded answer points only at the pointed units that state it
    table_records: bool = True  # well-formed markdown tables are shown as records, "row: column = value; ..."
    # table_records: also two-column tables glued under grouped names ("Duration (s) Energy (Wh) single double
    # single double"), cut into one column per group and sub-column (table_records.grouped_columns)
    grouped_headers: bool = True
    # table_records: also two-column tables glued under a two-row header whose groups span sub-columns
    # ("Water for Training(million L) Water for Each Request(mL) On-site Water Total Water On-site Water
    # Total Water"), cut into one column per group and sub-column (table_records.spanning_columns)
    spanning_headers: bool = True
    # a number copied from a table record is swapped for the record's cell whose column name shares more of
    # the question's words (table_cells.py): the model finds the row, code picks the cell
    cell_from_header: bool = True
    # a positive number the context writes only with a minus sign ("-34.66" in a "% change" column) gets
    # it back, unless the question asks for a decrease as such ("what reduction"): restate.written_negative
    restate_sign: bool = True
    # operands copied from two records of one table under different columns: b is a's record's cell under b's
    # column ("Cost ($)" for both GPUs, not one from "Cost ($/hr)"): table_cells.same_record_operand
    same_record_operands: bool = True
    # a copied number no pointed unit states, when the pointed units are table rows with one numeric cell among
    # them, becomes that cell (the model points at the right row and copies another unit's number)
    pointed_cell: bool = False
    # ref_id: the one document a question names ("According to Strubell et al. (2019)"), when the context holds it
    cite_named_doc: bool = True
    tidy_names: bool = True  # a name answer loses the question's "Which <kind>" words at its ends (names.py)
    # a copied rounding ("5.4 million liters") becomes the one number of the context it rounds (a table's
    # 5.439 million L): the grader's 0.1% wants the precise value (restate.more_precise)
    precise_numbers: bool = True
    demos: list[str] = field(default_factory=lambda: ["d303", "d603", "d317", "d320", "d416"])  # labelled question ids shown as worked examples
    # question kinds shown the worked examples; the others get the system prompt alone (measured: numeric
    # answers read better without them, True/False and names worse)
    demo_kinds: list[str] = field(default_factory=lambda: ["true_false", "range", "text"])
    demo_file: str = "data/wattbot/dev_QA.csv"
    corpus: CorpusParams = corpus_field()  # the `corpus:` section (section() fills it from there)
    vision: VisionParams = vision_field()  # the `vision:` section: figures' pixels to a vision model (images.py)

    def validate(self) -> None:
        from stages.core.common.params import ParamError

        if self.reader not in ("free", "typed"):
            raise ParamError(f"params.yaml: answer.reader={self.reader!r} must be free or typed")
        for name, kinds in (("typed_kinds", self.typed_kinds), ("demo_kinds", self.demo_kinds)):
            bad = [k for k in kinds if k not in KINDS]
            if bad:
                raise ParamError(f"params.yaml: answer.{name} has unknown kinds {bad}: use {', '.join(KINDS)}")
        if self.number_format not in NUMBER_FORMATS:
            raise ParamError(f"params.yaml: answer.number_format={self.number_format!r} must be json, text, "
                             "expression, operation or named_operation")
        if self.compute_format not in ("", *NUMBER_FORMATS):
            raise ParamError(f"params.yaml: answer.compute_format={self.compute_format!r} must be empty, json, "
                             "text, expression, operation or named_operation")
        if self.abstain not in ("never", "model", "ungrounded"):
            raise ParamError(f"params.yaml: answer.abstain={self.abstain!r} must be never, model or ungrounded")
        if self.infer_unit not in INFER_UNIT:
            raise ParamError(f"params.yaml: answer.infer_unit={self.infer_unit!r} must be auto, always or never")
        self.unit_words = {} if self.unit_words is None else self.unit_words
        if not isinstance(self.unit_words, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and k.strip() and v.strip()
                for k, v in self.unit_words.items()):
            raise ParamError(f"params.yaml: answer.unit_words={self.unit_words!r} must map unit words to units "
                             "(non-empty strings), e.g. {eps: USD}")
        if self.explain_max_chars < 20 or self.explain_min_words < 1 or self.explain_max_tokens < 16:
            raise ParamError("params.yaml: answer.explain_max_chars must be >= 20, answer.explain_min_words >= 1 "
                             "and answer.explain_max_tokens >= 16")
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
        from stages.core.common.params import ParamError

        if self.n < 1:
            raise ParamError(f"params.yaml: ensemble.n={self.n} must be >= 1")
        bad = [v for v in self.views if v not in VIEWS]
        if bad or not self.views:
            raise ParamError(f"params.yaml: ensemble.views={self.views!r}: each must be one of {VIEWS}")
        bad = [f for f in self.number_formats if f not in NUMBER_FORMATS]
        if bad:
            raise ParamError(f"params.yaml: ensemble.number_formats={self.number_formats!r}: each must be json, "
                             "text, expression, operation or named_operation")
        for kinds in self.extra_demo_kinds:
            if not isinstance(kinds, list) or any(k not in KINDS for k in kinds):
                raise ParamError(f"params.yaml: ensemble.extra_demo_kinds={self.extra_demo_kinds!r}: each member's "
                                 f"entry must be a list (maybe empty) of question kinds from {KINDS}")

