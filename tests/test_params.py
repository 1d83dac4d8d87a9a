"""params.yaml validation: every wrong key or value is one clear error naming it."""
from __future__ import annotations

from pathlib import Path

import pytest

from stages.core.answer.params import AnswerParams, EnsembleParams
from stages.core.common.params import ParamError, load_params, section
from stages.core.embed.embedder import EmbedParams
from stages.core.llm.params import LLMParams
from stages.core.plan.planner import PlanParams
from stages.core.retrieve.params import RetrieveParams

ROOT = Path(__file__).resolve().parents[1]


def test_repository_params_yaml_parses_into_every_section():
    params = load_params(ROOT / "params.yaml")  # not the cwd: pytest may run from anywhere
    assert section(LLMParams, "llm", params).model == "qwen2.5-coder-1.5b"
    retrieve = section(RetrieveParams, "retrieve", params)
    assert retrieve.max_context_tokens == params["retrieve"]["max_context_tokens"] > 0
    assert retrieve.named_docs in ("none", "prior")
    assert section(EnsembleParams, "ensemble", params).n >= 1
    section(AnswerParams, "answer", params)
    section(PlanParams, "plan", params)
    section(EmbedParams, "embed", params)
    from stages.core.index.store import IndexParams

    assert section(IndexParams, "index", params).ann_min_rows == params["index"]["ann_min_rows"]


def test_unknown_answer_reader_names_the_parameter():
    with pytest.raises(ParamError) as e:
        section(AnswerParams, "answer", {"answer": {"reader": "majority"}})
    msg = str(e.value)
    assert "answer.reader='majority'" in msg and "typed" in msg


def test_unknown_key_and_wrong_type_are_named():
    with pytest.raises(ParamError, match=r"retrieve\.topk"):
        section(RetrieveParams, "retrieve", {"retrieve": {"topk": 3}})
    with pytest.raises(ParamError, match=r"retrieve\.max_context_tokens must be an integer"):
        section(RetrieveParams, "retrieve", {"retrieve": {"max_context_tokens": "many"}})
    with pytest.raises(ParamError, match=r"retrieve\.max_context_tokens"):
        section(RetrieveParams, "retrieve", {"retrieve": {"max_context_tokens": 0}})
    with pytest.raises(ParamError, match=r"retrieve\.named_docs"):
        section(RetrieveParams, "retrieve", {"retrieve": {"named_docs": "filter"}})
    with pytest.raises(ParamError, match=r"ensemble\.n"):
        section(EnsembleParams, "ensemble", {"ensemble": {"n": 0}})


def test_bad_base_url_and_unknown_embedded_model():
    with pytest.raises(ParamError, match=r"llm\.base_url"):
        section(LLMParams, "llm", {"llm": {"base_url": "localhost:8000"}})
    with pytest.raises(ParamError, match=r"embed\.model"):
        section(EmbedParams, "embed", {"embed": {"model": "bge-large"}})


SECTIONS = {
    "answer": AnswerParams, "ensemble": EnsembleParams, "llm": LLMParams, "plan": PlanParams,
    "retrieve": RetrieveParams,
}


def _all_sections() -> dict[str, type]:
    from stages.core.caption.describe import CaptionParams, VisionParams
    from stages.core.embed.embedder import EmbedParams
    from stages.core.extract.loaders import ExtractParams
    from stages.core.index.store import IndexParams
    from stages.core.tree.build import TreeParams

    return {**SECTIONS, "caption": CaptionParams, "vision": VisionParams, "extract": ExtractParams,
            "embed": EmbedParams, "index": IndexParams, "tree": TreeParams}


def test_dataclass_defaults_are_params_yaml():
    """params.yaml is the single source of defaults: code that builds a section's dataclass
    without the file (tests, notebooks, the bench) must run the same configuration."""
    import dataclasses

    from stages.core.common.corpus import CorpusParams

    params = load_params(ROOT / "params.yaml")
    mismatches = []
    for name, cls in {**_all_sections(), "corpus": CorpusParams}.items():
        from_file = section(cls, name, params)
        for f in dataclasses.fields(cls):
            if "section" in f.metadata:  # another section's dataclass (corpus_field()), checked as that section
                continue
            if f.name not in params[name]:
                mismatches.append(f"{name}.{f.name} is missing from params.yaml")
            elif name == "corpus":  # by design: neutral defaults, WattBot's words in params.yaml
                continue
            elif getattr(cls(), f.name) != getattr(from_file, f.name):
                mismatches.append(f"{name}.{f.name}: dataclass default {getattr(cls(), f.name)!r} "
                                  f"!= params.yaml {getattr(from_file, f.name)!r}")
    assert mismatches == []
