"""dvc.yaml names every file a stage runs, so `dvc repro` can never serve a stale output.

Each stage's transitive imports inside the project (tests/codegraph.py) must be covered
by its `deps:` (a file, or a folder above it), and every code dep must hold something
the stage runs (no stage reruns for code it does not import).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from codegraph import ROOT, closure, load_stages, missing_deps, unused_code_deps

STAGES = load_stages()


def test_every_pipeline_stage_runs_a_project_module() -> None:
    assert set(STAGES) == {"extract", "caption", "build_tree", "embed", "index", "plan", "retrieve", "answer",
                           "vote", "score"}


@pytest.mark.parametrize("name", sorted(STAGES))
def test_stage_deps_cover_every_file_it_imports(name: str) -> None:
    stage = STAGES[name]
    assert Path(stage.module.replace(".", "/") + ".py") in closure(stage.module)
    assert missing_deps(stage) == [], f"dvc.yaml stage {name}: add these (or their folder) to deps"


@pytest.mark.parametrize("name", sorted(STAGES))
def test_stage_code_deps_are_all_used(name: str) -> None:
    assert unused_code_deps(STAGES[name]) == [], f"dvc.yaml stage {name}: deps it does not import"


@pytest.mark.parametrize("name", sorted(STAGES))
def test_removing_any_code_dep_is_caught(name: str) -> None:
    """The check can fail: drop any one code dep and a file the stage imports is reported."""
    stage = STAGES[name]
    code = [d for d in stage.deps if d.startswith("stages/")]
    assert code
    for dep in code:
        reduced = dataclasses.replace(stage, deps=tuple(d for d in stage.deps if d != dep))
        missing = missing_deps(reduced)
        assert missing and all(m == dep or m.startswith(dep + "/") for m in missing), (dep, missing)


def test_a_package_init_that_runs_code_must_be_a_dep(tmp_path: Path) -> None:
    """An __init__.py outside every dep is exempt only while it runs nothing."""
    pkg = tmp_path / "stages"
    (pkg / "core" / "common").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""docstring only."""\n')
    (pkg / "core" / "__init__.py").write_text("")
    (pkg / "core" / "common" / "__init__.py").write_text("")
    (pkg / "core" / "common" / "util.py").write_text("X = 1\n")
    (pkg / "job.py").write_text("from stages.core.common.util import X\n")
    stage = dataclasses.replace(STAGES["extract"], module="stages.job",
                                deps=("stages/job.py", "stages/core/common"))
    closure.cache_clear()
    try:
        assert missing_deps(stage, root=tmp_path) == []
        (pkg / "core" / "__init__.py").write_text("import os\n")
        closure.cache_clear()
        assert missing_deps(stage, root=tmp_path) == ["stages/core/__init__.py"]
        (pkg / "job.py").write_text("from .core.common import util\nfrom stages.core import other\n")
        (pkg / "core" / "other.py").write_text("")
        closure.cache_clear()
        assert missing_deps(stage, root=tmp_path) == ["stages/core/__init__.py", "stages/core/other.py"]
    finally:
        closure.cache_clear()


def test_function_level_imports_count() -> None:
    """score imports the vote stage's reader inside a function: it still counts."""
    assert Path("stages/core/answer/voting.py") in closure("stages.score")
    assert ROOT.joinpath("stages/score.py").exists()
