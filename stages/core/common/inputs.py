"""The `data:` params section: where the documents, their metadata and the questions are.

Every stage and tool reads the three paths through `data_params`, so a missing, null or
misspelt key is one error naming it (``params.yaml: missing parameter data.corpus_dir``),
never a traceback or, worse, a default that reads the wrong files (an absent corpus_dir
used to make extract read the whole repository).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stages.core.common.params import ParamError, load_params, section


@dataclass(frozen=True)
class DataParams:
    """The `data:` section of params.yaml (no defaults: a project names its own files)."""

    corpus_dir: str  # the documents (PDF, WattBot JSON, Markdown, text), searched recursively
    metadata: str  # one row per document: id, title (type, year, citation, url optional)
    questions: str  # id, question (answer_unit; gold answer columns for scoring)

    def validate(self) -> None:
        for key in ("corpus_dir", "metadata", "questions"):
            if not str(getattr(self, key)).strip():
                raise ParamError(f"params.yaml: data.{key} is empty; name the file or folder")

    def corpus(self) -> Path:
        """The corpus folder; an error naming data.corpus_dir when it is not a folder."""
        p = Path(self.corpus_dir)
        if not p.is_dir():
            what = "is a file, not a folder" if p.exists() else "not found"
            raise ParamError(f"params.yaml: data.corpus_dir={self.corpus_dir!r}: folder {what}")
        return p


def data_params(params: dict[str, Any] | None = None) -> DataParams:
    """The validated `data:` section (params.yaml read when `params` is None)."""
    return section(DataParams, "data", load_params() if params is None else params)
