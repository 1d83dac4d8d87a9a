"""The `answer:` and `ensemble:` params sections: how each member reads and answers.

Only what a user would turn is a param: the reader, the retries, where a question's unit comes
from, the worked examples, and the ensemble's size and seed. How the readers read is fixed in
code (typed_reader.py, typed_answer.py, free_reader.py, ensemble.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from stages.core.answer.kinds import INFER_UNIT
from stages.core.common.corpus import CorpusParams, corpus_field
from stages.core.common.vision import VisionParams, vision_field

READERS = ("typed", "free")
STYLES = ("wattbot", "analyst")
# every call is greedy: the same request always gets the same reply, so the answers are reproducible and
# ensemble members that send the same request share one reply (they differ by the view of the context)
TEMPERATURE = 0.0


@dataclass
class AnswerParams:
    """The `answer:` section of params.yaml."""

    # typed: a JSON schema per question kind, values grounded in the context by code (typed_reader.py) |
    # free: one explained JSON reply, rescued in code (free_reader.py)
    reader: str = "typed"
    # the answers' conventions (analyst.py): wattbot = True/False as 1/0 and `is_blank` in every blank field |
    # analyst = Yes/No with its reason, named ratios computed by code with the formula in the explanation,
    # explanations in whole cited sentences, a stated refusal, and no unit on an answer that has none
    style: str = "wattbot"
    max_retries: int = 1  # a blank reading is asked again over the next, wider context (retrieve builds them)
    # where the kind and unit come from the question alone (kinds.question_type): auto = where the questions
    # file gives no unit (no answer_unit column or a blank cell) | always = every question | never = the file's unit
    infer_unit: str = "auto"
    unit_words: dict[str, str] = field(default_factory=dict)  # more unit words for the inference: "eps" -> "USD"
    demos: list[str] = field(default_factory=lambda: ["d303", "d603", "d317", "d320", "d416"])  # labelled question ids shown as worked examples
    demo_file: str = "data/wattbot/dev_QA.csv"
    corpus: CorpusParams = corpus_field()  # the `corpus:` section (section() fills it from there)
    vision: VisionParams = vision_field()  # the `vision:` section: figures' pixels to a vision model (images.py)

    def validate(self) -> None:
        from stages.core.common.params import ParamError

        if self.reader not in READERS:
            raise ParamError(f"params.yaml: answer.reader={self.reader!r} must be free or typed")
        if self.style not in STYLES:
            raise ParamError(f"params.yaml: answer.style={self.style!r} must be wattbot or analyst")
        if self.infer_unit not in INFER_UNIT:
            raise ParamError(f"params.yaml: answer.infer_unit={self.infer_unit!r} must be auto, always or never")
        self.unit_words = {} if self.unit_words is None else self.unit_words
        if not isinstance(self.unit_words, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and k.strip() and v.strip()
                for k, v in self.unit_words.items()):
            raise ParamError(f"params.yaml: answer.unit_words={self.unit_words!r} must map unit words to units "
                             "(non-empty strings), e.g. {eps: USD}")
        if self.max_retries < 0:
            raise ParamError("params.yaml: answer.max_retries must be >= 0")


@dataclass
class EnsembleParams:
    """The `ensemble:` section of params.yaml: n members, each reading its own view of the context
    (ensemble.MEMBER_VIEWS), voted into one answer (voting.py)."""

    n: int = 1
    seed: int = 0  # member i of the free reader sends seed + i; greedy typed members all send seed

    def validate(self) -> None:
        from stages.core.common.params import ParamError

        if self.n < 1:
            raise ParamError(f"params.yaml: ensemble.n={self.n} must be >= 1")
