"""The `vision:` params section: a vision-capable OpenAI-compatible endpoint.

Two stages use it: caption (a description of every image, `vision.base_url`/`vision.model`)
and answer (a figure's pixels sent with the question, `stages/core/answer/images.py`).
It lives in common, as the `corpus:` section does, because the answer params link it
(``vision: VisionParams = vision_field()``, filled by `section()`) and the vote stage,
which reads the answer params module, imports nothing but common and the answer package.
"""
from __future__ import annotations

import base64
import dataclasses
from dataclasses import dataclass
from typing import Any

DETAILS = ("auto", "low", "high", "")


@dataclass(frozen=True)
class VisionParams:
    """The `vision:` section of params.yaml; empty base_url = offline (the documents' own captions)."""

    base_url: str = ""
    model: str = ""
    max_images_per_call: int = 2  # answer: figures whose pixels go with one question (0 = captions only)
    max_image_px: int = 768  # answer: a figure's longest side after downscaling (bounds its tokens)
    detail: str = "auto"  # answer: the image part's OpenAI `detail` (auto | low | high; "" = not sent)

    @property
    def enabled(self) -> bool:
        return bool(self.base_url.strip())

    @property
    def answers_with_figures(self) -> bool:
        """The answer stage sends figures' pixels: an endpoint is set and images per call > 0."""
        return self.enabled and self.max_images_per_call > 0

    def validate(self) -> None:
        from stages.core.common.params import ParamError

        if self.enabled and not self.model.strip():
            raise ParamError("params.yaml: vision.model must be set when vision.base_url is set")
        if self.enabled and not self.base_url.startswith(("http://", "https://")):
            raise ParamError(f"params.yaml: vision.base_url={self.base_url!r} must start with http:// or https://")
        if self.max_images_per_call < 0:
            raise ParamError(f"params.yaml: vision.max_images_per_call={self.max_images_per_call} must be >= 0 "
                             "(0 = the answer stage sends captions only)")
        if self.max_image_px < 32:
            raise ParamError(f"params.yaml: vision.max_image_px={self.max_image_px} must be >= 32")
        if self.detail not in DETAILS:
            raise ParamError(f"params.yaml: vision.detail={self.detail!r} must be auto, low, high or '' (not sent)")


def vision_field() -> Any:
    """A dataclass field holding the `vision:` section (section() fills it from there)."""
    return dataclasses.field(default_factory=VisionParams, metadata={"section": "vision"})


def png_data_url(png: bytes) -> str:
    """PNG bytes as the data URL an OpenAI image content part carries (caption and answer both send them)."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
