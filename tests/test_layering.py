"""The layering of stages/core, derived from the pipeline itself.

- ``common`` imports only ``common``; ``llm`` only ``common`` and ``llm``; ``engine`` (where a stage's items
  run: local or Ray) only ``common`` and ``engine``, and every stage's package may import it.
- A stage's package (``stages/core/<stage>/``, named after its dvc.yaml stage; ``tree`` for
  build_tree) may import
  ``common``, ``llm``, itself and the packages of the stages upstream of it in dvc.yaml,
  never one downstream: so an edit to a package reruns its stage and what follows, no other.
- ``tools`` (ask, compare) may import any package; nothing in stages/core imports a
  stage's entry module (``stages/<stage>.py``) or the benchmarks (``bench``).
"""
from __future__ import annotations

from pathlib import Path

import pytest
from codegraph import ROOT, direct_imports, load_stages, module_name, upstream

STAGES = load_stages()
UPSTREAM = upstream(STAGES)
CORE = ROOT / "stages" / "core"
BASE = {"common": {"common"}, "llm": {"common", "llm"}, "engine": {"common", "engine"}}
STAGE_OF = {"tree": "build_tree"}  # a package is named after its stage, but for the tree the stage builds
STAGE_OF_PACKAGE = {s: p for p, s in STAGE_OF.items()}
PACKAGES = sorted(p.name for p in CORE.iterdir() if (p / "__init__.py").exists())


def allowed(package: str) -> set[str] | None:
    """Packages ``package`` may import; None = any (tools)."""
    if package == "tools":
        return None
    if package in BASE:
        return BASE[package]
    package_of = {STAGE_OF.get(p, p): p for p in PACKAGES}
    return {"common", "llm", "engine", package, *(package_of[s] for s in UPSTREAM[STAGE_OF.get(package, package)]
                                        if s in package_of)}


def core_package(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["stages", "core"] and len(parts) > 2 else None


def violations(path: Path, root: Path = ROOT) -> list[str]:
    package = core_package(module_name(path, root))
    ok = allowed(package) if package else None
    bad = []
    for m in sorted(direct_imports(path, root)):
        target = core_package(m)
        if target is None and m not in ("stages", "stages.core"):
            bad.append(f"{m} (a stage entry module)")
        elif ok is not None and target is not None and target not in ok:
            bad.append(m)
    return bad


def test_every_core_package_has_a_place_in_the_layering() -> None:
    unknown = [p for p in PACKAGES if p not in BASE and p != "tools" and STAGE_OF.get(p, p) not in STAGES]
    assert unknown == [], "a package in stages/core must be common, llm, tools or named after a dvc.yaml stage"
    assert [p.name for p in CORE.glob("*.py")] == ["__init__.py"], "stages/core holds packages only"


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")), ids=lambda p: p.relative_to(CORE).as_posix())
def test_core_module_imports_follow_the_layering(path: Path) -> None:
    assert violations(path) == []
    text = path.read_text(encoding="utf-8")
    assert "from bench" not in text and "import bench" not in text


@pytest.mark.parametrize("path", sorted((ROOT / "stages").glob("*.py")), ids=lambda p: p.name)
def test_entry_modules_import_only_the_core_and_follow_the_layering(path: Path) -> None:
    """stages/<stage>.py imports what its stage's package may import (a tool's entry: anything)."""
    others = [m for m in direct_imports(path) if core_package(m) is None and m not in ("stages", "stages.core")]
    assert others == []
    stage = path.stem
    if stage in STAGES:
        package = next((p for p, s in STAGE_OF.items() if s == stage), stage)
        ok = allowed(package) if package in PACKAGES else {"common", "llm", "engine"} | {
            STAGE_OF_PACKAGE.get(s, s) for s in UPSTREAM[stage]}
        assert sorted(m for m in direct_imports(path) if core_package(m) not in ok | {None}) == []


def test_the_rule_catches_an_import_from_downstream(tmp_path: Path) -> None:
    """retrieve importing the answer package (downstream of it) breaks the layering; tree does not."""
    assert "answer" not in allowed("retrieve")
    assert "retrieve" in allowed("answer") and "tree" in allowed("retrieve")
    assert allowed("common") == {"common"} and "llm" not in allowed("common")
    for pkg in ("retrieve", "answer", "tree"):  # a copy of the layout, with one bad module
        (tmp_path / "stages" / "core" / pkg).mkdir(parents=True)
        for f in ("__init__.py", "m.py"):
            (tmp_path / "stages" / "core" / pkg / f).write_text("")
    (tmp_path / "stages" / "__init__.py").write_text("")
    (tmp_path / "stages" / "core" / "__init__.py").write_text("")
    bad = tmp_path / "stages" / "core" / "retrieve" / "bad.py"
    bad.write_text("from stages.core.tree import m\nfrom stages.core.answer.m import x\n")
    assert violations(bad, tmp_path) == ["stages.core.answer.m"]
