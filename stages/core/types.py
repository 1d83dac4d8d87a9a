"""Records shared between answer, vote and score."""
from __future__ import annotations

from dataclasses import dataclass, field

BLANK = "is_blank"


@dataclass
class Answer:
    """One answer to one question, already normalised to the submission format.

    ``answer_value`` is a string as it goes into the CSV: a number without
    thousands separators, ``[low,high]`` for a range, 1/0 for True/False, free
    text for categorical answers, or ``is_blank``.
    """

    question_id: str
    answer: str = BLANK
    answer_value: str = BLANK
    answer_unit: str = BLANK
    ref_id: list[str] = field(default_factory=list)
    explanation: str = BLANK
    supporting_materials: str = BLANK
    grounded: bool = True  # the reader found the value in the units it cited (typed reader)

    @property
    def is_blank(self) -> bool:
        return self.answer_value.strip().lower() in {"", BLANK}
