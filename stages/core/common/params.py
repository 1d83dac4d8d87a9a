"""Read params.yaml into typed, validated dataclasses.

Each core module defines the dataclass for its own params section; `section()`
builds it and turns any wrong key, type or value into one error that names the
parameter (e.g. ``vote.strategy``) and what is allowed.
"""
from __future__ import annotations

import dataclasses
import difflib
import math
import types
import typing
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args, get_origin

import yaml

from stages.core.common.errors import UserError

T = TypeVar("T")

PARAMS_FILE = "params.yaml"
# every section a stage or tool reads: any other top-level key (a misspelt `retreive:`) is an error,
# not a section silently ignored (its stage would run on the defaults)
SECTIONS = ("engine", "ray", "data", "corpus", "llm", "vision", "extract", "caption", "tree", "embed", "index", "plan",
            "retrieve", "answer", "ensemble")


class ParamError(UserError, ValueError):
    """A parameter in params.yaml is missing, unknown or has a wrong value."""


def load_params(path: str | Path = PARAMS_FILE) -> dict[str, Any]:
    """Load params.yaml as a plain dict (clear error if it is missing or not a mapping)."""
    p = Path(path)
    if not p.exists():
        raise ParamError(f"{p}: params file not found (run from the repository root)")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except UnicodeDecodeError as e:
        raise ParamError(f"{p}: not UTF-8 text (byte {e.start})") from e
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ParamError(f"{p}: not valid YAML{where}: {problem}") from e
    if not isinstance(data, dict):
        raise ParamError(f"{p}: expected a mapping of sections, got {type(data).__name__}")
    unknown = [str(k) for k in data if k not in SECTIONS]
    if unknown:
        hints = [f"{k!r} (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(k, SECTIONS, 1)) else repr(k)
                 for k in unknown]
        raise ParamError(f"{p}: unknown section(s) {', '.join(hints)}; known: {', '.join(SECTIONS)}")
    return data


def _non_negative(name: str, value: float) -> None:
    """Every number in params.yaml is a count, size, time or weight: negative (or NaN) is a mistake."""
    if not math.isfinite(value) or value < 0:
        raise ParamError(f"params.yaml: {name}={value!r} must be a number >= 0")


def _check(name: str, value: Any, tp: Any) -> Any:
    """Check/coerce one value against a type hint; raise ParamError naming `name`."""
    origin = get_origin(tp)
    if tp is Any:
        return value
    if origin is Literal:
        allowed = get_args(tp)
        if value not in allowed:
            raise ParamError(
                f"params.yaml: {name}={value!r} is not allowed; use one of: "
                + ", ".join(repr(a) for a in allowed)
            )
        return value
    if origin in (typing.Union, types.UnionType):
        args = get_args(tp)
        if value is None and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _check(name, value, a)
            except ParamError as e:
                errors.append(str(e))
        raise ParamError(errors[0] if errors else f"params.yaml: {name}={value!r} is invalid")
    if origin in (list, tuple):
        if value is None:
            value = []
        if not isinstance(value, (list, tuple)):
            raise ParamError(f"params.yaml: {name} must be a list, got {value!r}")
        (inner,) = get_args(tp)[:1] or (Any,)
        return [_check(f"{name}[{i}]", v, inner) for i, v in enumerate(value)]
    if tp is bool:
        if not isinstance(value, bool):
            raise ParamError(f"params.yaml: {name} must be true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParamError(f"params.yaml: {name} must be an integer, got {value!r}")
        _non_negative(name, value)
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ParamError(f"params.yaml: {name} must be a number, got {value!r}")
        _non_negative(name, float(value))
        return float(value)
    if tp is str:
        if value is None:
            return ""
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ParamError(f"params.yaml: {name} must be a string, got {value!r}")
        return str(value)
    return value


def section(cls: type[T], name: str, params: dict[str, Any] | None = None, *, part: bool = False) -> T:
    """Build dataclass `cls` from params[name]; unknown, missing or bad keys raise ParamError.

    ``part``: `cls` reads only some keys of the section (those its fields name), and the
    other keys belong to another stage's dataclass, which checks them."""
    if params is None:
        params = load_params()
    raw = params.get(name)
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ParamError(f"params.yaml: section {name!r} must be a mapping, got {raw!r}")
    hints = typing.get_type_hints(cls)
    # a field with metadata {"section": other} holds another section's dataclass (e.g. corpus_field())
    linked = {f.name: f.metadata["section"] for f in dataclasses.fields(cls)  # type: ignore[arg-type]
              if "section" in f.metadata}
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name not in linked}  # type: ignore[arg-type]
    unknown = sorted(str(k) for k in set(raw) - set(fields))
    if part:
        raw = {k: v for k, v in raw.items() if k in fields}
    elif unknown:
        hints = [f"{name}.{k}" + (f" (did you mean {name}.{m[0]}?)" if (m := difflib.get_close_matches(k, fields, 1))
                                  else "") for k in unknown]
        raise ParamError(f"params.yaml: unknown parameter(s) {', '.join(hints)}; known: {', '.join(sorted(fields))}")
    kwargs: dict[str, Any] = {}
    for fname, f in fields.items():
        if fname in raw:
            kwargs[fname] = _check(f"{name}.{fname}", raw[fname], hints[fname])
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:  # type: ignore[misc]
            raise ParamError(f"params.yaml: missing parameter {name}.{fname}")
    for fname, other in linked.items():
        kwargs[fname] = section(hints[fname], other, params)
    obj = cls(**kwargs)
    validate = getattr(obj, "validate", None)
    if callable(validate):
        validate()
    return obj
