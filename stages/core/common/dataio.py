"""Read the WattBot-style inputs: questions CSV and document metadata CSV.

Errors name the file, the row and the column, so a user can fix the input.
"""
from __future__ import annotations

import io
from pathlib import Path

import polars as pl

from stages.core.common.errors import UserError

QUESTION_COLUMNS = ("id", "question")
SUBMISSION_COLUMNS = (
    "id",
    "question",
    "answer",
    "answer_value",
    "answer_unit",
    "ref_id",
    "ref_url",
    "supporting_materials",
    "explanation",
)
METADATA_COLUMNS = ("id", "title")


class InputError(UserError, ValueError):
    """An input file is missing, unreadable or lacks what the pipeline needs."""


def _read_text_tolerant(path: Path) -> str:
    raw = path.read_bytes()
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        # metadata.csv mixes utf-8 with latin-1 bytes: decode line by line
        out = []
        for line in raw.split(b"\n"):
            try:
                out.append(line.decode("utf-8"))
            except UnicodeDecodeError:
                out.append(line.decode("cp1252", errors="replace"))
        return "\n".join(out)


def read_csv_tolerant(path: str | Path, required: tuple[str, ...] = ()) -> pl.DataFrame:
    """Read a CSV as all-string columns, tolerating a BOM and latin-1 bytes."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: file not found")
    try:
        df = pl.read_csv(
            io.StringIO(_read_text_tolerant(p)),
            infer_schema=False,
        )
    except Exception as e:  # polars raises several types for malformed CSV
        raise InputError(f"{p}: not a readable CSV ({e})") from e
    df = df.rename({c: c.strip() for c in df.columns}).with_columns(pl.all().fill_null(""))
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputError(
            f"{p}: missing required column(s) {', '.join(missing)}; found columns: {', '.join(df.columns)}"
        )
    return df


def read_questions(path: str | Path) -> pl.DataFrame:
    """Questions CSV: needs id and question; answer_unit is optional: without the column every
    row's unit is empty, like a blank cell (the answer stage then infers the kind and unit from the
    question, answer.infer_unit), while WattBot's ``is_blank`` is a given unit (a name or True/False)."""
    df = read_csv_tolerant(path, QUESTION_COLUMNS)
    p = Path(path)
    if "answer_unit" not in df.columns:
        df = df.with_columns(pl.lit("").alias("answer_unit"))
    for i, row in enumerate(df.iter_rows(named=True), start=2):
        if not (row["id"] or "").strip():
            raise InputError(f"{p}: row {i} has an empty id")
        if not (row["question"] or "").strip():
            raise InputError(f"{p}: row {i} (id {row['id']}) has an empty question")
    dup = df.filter(pl.col("id").is_duplicated())["id"].unique().to_list()
    if dup:
        raise InputError(f"{p}: duplicate question id(s): {', '.join(sorted(dup))}")
    return df


def has_answers(df: pl.DataFrame) -> bool:
    """True when a questions table carries gold answers (train_QA), not test_Q."""
    if "answer_value" not in df.columns or "ref_id" not in df.columns:
        return False
    return bool((df["answer_value"].str.strip_chars() != "").any())


def read_metadata(path: str | Path) -> pl.DataFrame:
    """Document metadata (id, type, title, year, citation, url)."""
    return read_csv_tolerant(path, METADATA_COLUMNS)


def doc_urls(meta: pl.DataFrame) -> dict[str, str]:
    """doc id -> url from the metadata (empty when the optional url column is absent)."""
    return dict(zip(meta["id"].to_list(), meta["url"].to_list(), strict=True)) if "url" in meta.columns else {}
