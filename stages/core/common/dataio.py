"""Read the WattBot-style inputs: questions CSV and document metadata CSV.

Errors name the file, the row and the column, so a user can fix the input.
"""
from __future__ import annotations

import codecs
import io
import logging
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


log = logging.getLogger("treerag.inputs")


class InputError(UserError, ValueError):
    """An input file is missing, unreadable or lacks what the pipeline needs."""


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _read_text_tolerant(path: Path, strict: bool = False) -> str:
    """The file's text: UTF-8, or UTF-16/32 with a byte-order mark. A line that is not UTF-8 is an
    error with ``strict`` (questions: mojibake would change every answer); else it is read as cp1252
    (metadata.csv mixes UTF-8 with latin-1 bytes) and a warning gives the count of such lines."""
    raw = path.read_bytes()
    for bom, enc in _BOMS:
        if raw.startswith(bom):
            try:
                return raw.decode(enc)
            except UnicodeDecodeError as e:
                raise InputError(f"{path}: not valid {enc} text although it starts with its byte-order mark "
                                 f"(byte {e.start})") from e
    if b"\x00" in raw:
        raise InputError(f"{path}: holds NUL bytes: not a text file, or UTF-16 without a byte-order mark; "
                         "save it as UTF-8")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        out, bad = [], []
        for n, line in enumerate(raw.split(b"\n"), start=1):
            try:
                out.append(line.decode("utf-8"))
            except UnicodeDecodeError as e:
                if strict:
                    raise InputError(f"{path}: line {n} is not UTF-8 (byte 0x{line[e.start]:02x} at column "
                                     f"{e.start + 1}); save the file as UTF-8") from e
                bad.append(n)
                out.append(line.decode("cp1252", errors="replace"))
        log.warning("%s: %d line(s) not UTF-8 (first: line %d), read as cp1252", path, len(bad), bad[0])
        return "\n".join(out)


def read_csv_tolerant(path: str | Path, required: tuple[str, ...] = (), strict: bool = False) -> pl.DataFrame:
    """Read a CSV as all-string columns, tolerating a BOM and (unless ``strict``) latin-1 bytes."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: file not found")
    if p.is_dir():
        raise InputError(f"{p}: a folder, not a CSV file")
    text = _read_text_tolerant(p, strict)
    try:
        df = pl.read_csv(
            io.StringIO(text),
            infer_schema=False,
        )
    except Exception as e:  # polars raises several types for malformed CSV
        why = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise InputError(f"{p}: not a readable CSV ({why})") from e
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
    df = read_csv_tolerant(path, QUESTION_COLUMNS, strict=True)
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
    """Document metadata (id, type, title, year, citation, url). Two rows for one id would give a
    document whichever row came last: an error; rows with an empty id match no document: dropped,
    with a warning that counts them. An empty title is allowed (the document's own title is used)."""
    df = read_csv_tolerant(path, METADATA_COLUMNS)
    df = df.with_columns(pl.col("id").str.strip_chars())
    dup = sorted(df.filter((pl.col("id") != "") & pl.col("id").is_duplicated())["id"].unique().to_list())
    if dup:
        raise InputError(f"{path}: duplicate document id(s): {', '.join(dup[:10])}")
    empty = df.filter(pl.col("id") == "").height
    if empty:
        log.warning("%s: %d row(s) with an empty id skipped", path, empty)
    return df.filter(pl.col("id") != "")


def doc_urls(meta: pl.DataFrame) -> dict[str, str]:
    """doc id -> url from the metadata (empty when the optional url column is absent)."""
    return dict(zip(meta["id"].to_list(), meta["url"].to_list(), strict=True)) if "url" in meta.columns else {}
