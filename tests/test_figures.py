"""Figures at answer time (stages/core/answer/images.py): an image context unit's PNG found from
its caption, the user message with OpenAI image parts after the unit's text, downscaling, the
routing of figure calls to the vision client, and nothing changed without a vision endpoint."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import polars as pl
import pymupdf
import pytest

from stages.core.answer import free_reader
from stages.core.answer.images import (
    FigureIndex,
    FigureRouter,
    answer_contexts,
    data_url,
    figure_contexts,
    has_images,
    with_figures,
)
from stages.core.answer.params import AnswerParams
from stages.core.answer.record import ContextBlock, context_blocks
from stages.core.answer.typed_answer import TypedMember, TypedQuestion, answer_question_typed, typed_prefixes
from stages.core.common.params import ParamError, section
from stages.core.common.vision import VisionParams
from stages.core.llm.protocol import Completion
from stages.core.llm.response_cache import ResponseCache

VISION = VisionParams(base_url="http://127.0.0.1:9/v1", model="vlm", max_images_per_call=2, max_image_px=64,
                      detail="high")


def png(path: Path, w: int, h: int, rgb: tuple[int, int, int]) -> str:
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, w, h), False)
    pix.set_rect(pix.irect, rgb)
    path.write_bytes(pix.tobytes("png"))
    return str(path)


def decoded(url: str) -> pymupdf.Pixmap:
    head, b64 = url.split(",", 1)
    assert head == "data:image/png;base64"
    return pymupdf.Pixmap(base64.b64decode(b64))


def images_frame(rows: list[tuple[str, str, int, str | None, bool, int]]) -> pl.DataFrame:
    return pl.DataFrame([{"image_id": i, "doc_id": d, "page": p, "path": path, "width": 10, "height": 10,
                          "has_pixels": px, "nearby_caption": None, "order": o} for i, d, p, path, px, o in rows])


def captions_frame(rows: list[tuple[str, str | None, str]]) -> pl.DataFrame:
    return pl.DataFrame([{"image_id": i, "doc_id": i.split(":")[0], "page": 1, "caption": c, "caption_source": s}
                         for i, c, s in rows])


def test_figure_index_finds_the_png_from_the_caption_text(tmp_path):
    a, b, c = (png(tmp_path / f"{n}.png", 8, 8, (9, 9, 9)) for n in "abc")
    images = images_frame([("d:p2:img1", "d", 2, a, True, 5), ("d:p2:img2", "d", 2, b, True, 9),
                           ("d:p3:img1", "d", 3, c, True, 1), ("d:p4:img1", "d", 4, None, False, 1),
                           ("e:p1:img1", "e", 1, c, True, 1)])
    captions = captions_frame([("d:p2:img1", "Figure 1: Power of the X100.\nA bar chart in watts.", "vision"),
                               ("d:p2:img2", "Figure 2: Energy per token.", "document_caption"),
                               ("d:p3:img1", "Figure 3: Cooling.", "document_caption"),
                               ("d:p4:img1", "Figure 4: no pixels.", "document_caption"),
                               ("e:p1:img1", None, "none")])
    index = FigureIndex(images, captions)
    # the tree re-joins the caption's sentences: spacing and punctuation differ, a window holds part of it
    assert index.find("d", 2, "Figure 1: Power of the X100. A bar chart in watts.") == a
    assert index.find("d", 2, "A bar chart in  watts") == a
    assert index.find("d", 2, "Figure 2: Energy per token.") == b
    assert index.find("d", 3, "a caption the tree rewrote") == c  # the page's only figure
    assert index.find("d", 2, "a caption the tree rewrote") is None  # two figures there: ambiguous
    assert index.find("d", 4, "Figure 4: no pixels.") is None  # a placeholder has no PNG
    assert index.find("e", 1, "anything") is None  # no caption: never an image node
    assert index.find("d", None, "Figure 1") is None


def test_figure_contexts_set_the_png_of_image_units_only(tmp_path):
    a = png(tmp_path / "a.png", 8, 8, (9, 9, 9))
    index = FigureIndex(images_frame([("d:p2:img1", "d", 2, a, True, 1)]),
                        captions_frame([("d:p2:img1", "Figure 1: Power.", "document_caption")]))
    ctx = pl.DataFrame({"question_id": ["q1", "q1", "q1"], "attempt": [0, 0, 1], "rank": [1, 2, 1],
                        "doc_id": ["d", "d", "d"], "page": [2, 2, 2], "media": [None, "image", "image"],
                        "text": ["Figure 1: Power.", "Figure 1: Power.", "Figure 1: Power."]})
    blocks, stats = figure_contexts(ctx, index)
    assert [[b.image for b in level] for level in blocks["q1"]] == [[None, a], [a]]
    assert (stats.image_units, stats.with_pixels) == (2, 2)
    # the same blocks as without figures, but for the image
    plain = context_blocks(ctx)
    assert [[(b.doc_id, b.text, b.media) for b in lv] for lv in blocks["q1"]] == \
           [[(b.doc_id, b.text, b.media) for b in lv] for lv in plain["q1"]]
    # no vision endpoint (or no images per call): context_blocks as always, the image files are not read
    for off in (VisionParams(), VisionParams(base_url="http://x/v1", model="m", max_images_per_call=0)):
        assert answer_contexts(ctx, off) == plain


def test_data_url_keeps_a_small_png_and_downscales_a_large_one(tmp_path):
    small = png(tmp_path / "small.png", 40, 20, (200, 10, 10))
    assert base64.b64decode(data_url(small, 64).split(",", 1)[1]) == Path(small).read_bytes()
    big = png(tmp_path / "big.png", 400, 100, (10, 200, 10))
    pix = decoded(data_url(big, 64))
    assert (pix.width, pix.height) == (64, 16) and pix.pixel(5, 5)[:3] == (10, 200, 10)


def typed_message(units: list[ContextBlock]) -> list[dict]:
    body = "Context:\n" + "\n\n".join(f"[{k}] {u.doc_id}{f' ({u.media})' if u.media else ''}: {u.text}"
                                      for k, u in enumerate(units, 1))
    return [{"role": "system", "content": "sys"}, {"role": "user", "content": body + "\n\nQuestion: q?"}]


def test_with_figures_puts_each_image_after_its_unit_text(tmp_path):
    red, blue, green = (png(tmp_path / f"{n}.png", 20, 10, c) for n, c in
                        (("r", (255, 0, 0)), ("b", (0, 0, 255)), ("g", (0, 255, 0))))
    units = [ContextBlock("a", "Plain text 1."), ContextBlock("d", "Figure 1: Red.", "image", red),
             ContextBlock("t", "| x | 1 |", "table"), ContextBlock("d", "Figure 2: Blue.", "image", blue),
             ContextBlock("d", "Figure 3: Green.", "image", green)]
    messages = typed_message(units)
    out = with_figures(messages, units, VISION)
    assert out[0] is messages[0] and messages[1]["content"].startswith("Context:")  # the input is not changed
    parts = out[1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url", "text"]
    assert parts[0]["text"].endswith("[2] d (image): Figure 1: Red.")
    assert parts[2]["text"].startswith("\n\n[3] t (table)") and parts[2]["text"].endswith("Figure 2: Blue.")
    assert parts[4]["text"].startswith("\n\n[5] d (image): Figure 3: Green.")  # over max_images_per_call: text only
    assert "".join(p["text"] for p in parts if p["type"] == "text") == messages[1]["content"]
    assert decoded(parts[1]["image_url"]["url"]).pixel(1, 1)[:3] == (255, 0, 0)
    assert decoded(parts[3]["image_url"]["url"]).pixel(1, 1)[:3] == (0, 0, 255)
    assert parts[1]["image_url"]["detail"] == "high"
    no_detail = with_figures(messages, units, VisionParams(base_url="http://x/v1", model="m", detail=""))
    assert "detail" not in no_detail[1]["content"][1]["image_url"]
    one = with_figures(messages, units, VisionParams(base_url="http://x/v1", model="m", max_images_per_call=1))
    assert sum(p["type"] == "image_url" for p in one[1]["content"]) == 1
    assert has_images(out) and not has_images(messages)


def test_with_figures_in_the_free_readers_media_part(tmp_path):
    red = png(tmp_path / "r.png", 20, 10, (255, 0, 0))
    blocks = [ContextBlock("d", "Figure 1: Red.", "image", red), ContextBlock("a", "Plain text 1.")]
    messages = free_reader.build_messages("q?", "W", blocks)
    parts = with_figures(messages, blocks, VISION)[1]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "text"]
    assert parts[0]["text"].endswith("Referenced media:\n[ref_id=d] (image) Figure 1: Red.")


def test_without_images_or_endpoint_the_messages_are_the_same_object(tmp_path):
    red = png(tmp_path / "r.png", 20, 10, (255, 0, 0))
    plain = [ContextBlock("a", "Plain text 1."), ContextBlock("d", "Figure 1: Red.", "image")]
    messages = typed_message(plain)
    assert with_figures(messages, plain, VISION) is messages  # no unit carries a PNG (no vision endpoint)
    figs = [plain[0], ContextBlock("d", "Figure 1: Red.", "image", red)]
    assert with_figures(messages, figs, VisionParams(base_url="http://x/v1", model="m", max_images_per_call=0)) \
        is messages
    assert with_figures(messages, figs, None) is messages


class RecordingLLM:
    def __init__(self, name: str) -> None:
        self.name, self.calls = name, []
        self.max_concurrency = 1

    def complete(self, messages, **kwargs):
        self.calls.append(messages)
        return Completion(text=json.dumps({"units": [1], "value": 250}), finish_reason="stop")


def test_router_sends_only_calls_with_images_to_the_vision_client():
    text, vision = RecordingLLM("text"), RecordingLLM("vision")
    router = FigureRouter(text, vision)
    plain = [{"role": "user", "content": "hello"}]
    fig = [{"role": "user", "content": [{"type": "text", "text": "x"},
                                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]}]
    router.complete(plain, temperature=0.0, seed=0, max_tokens=8)
    router.complete(fig, temperature=0.0, seed=0, max_tokens=8)
    assert text.calls == [plain] and vision.calls == [fig]


def test_typed_reader_sends_the_figure_and_the_cache_key_holds_its_pixels(tmp_path):
    red, blue = png(tmp_path / "r.png", 20, 10, (255, 0, 0)), png(tmp_path / "b.png", 20, 10, (0, 0, 255))
    ap = AnswerParams(demos=[], vision=VISION)
    setup = typed_prefixes(ap)
    keys = []
    for path in (red, blue, None):
        llm = RecordingLLM("vision")
        units = [ContextBlock("d", "Figure 1: Peak power of the X100.", "image", path)]
        out = answer_question_typed(llm, TypedQuestion("q1", "What peak power does the X100 reach?", "W"),
                                    [TypedMember([units], seed=0)], ap, setup)
        assert out[0].answer.answer_value == "250" and out[0].answer.ref_id == ["d"]
        (messages,) = llm.calls
        assert has_images(messages) == (path is not None)
        keys.append(ResponseCache.key({"model": "vlm", "messages": messages}))
    assert len(set(keys)) == 3  # the data URL is in the messages: another image is another cache entry


def test_vision_params_errors_name_the_parameter():
    with pytest.raises(ParamError, match=r"vision\.max_images_per_call"):
        section(VisionParams, "vision", {"vision": {"max_images_per_call": -1}})
    with pytest.raises(ParamError, match=r"vision\.detail"):
        section(VisionParams, "vision", {"vision": {"detail": "ultra"}})
    with pytest.raises(ParamError, match=r"vision\.max_image_px"):
        section(VisionParams, "vision", {"vision": {"max_image_px": 0}})
    with pytest.raises(ParamError, match=r"vision\.model"):
        section(VisionParams, "vision", {"vision": {"base_url": "http://x/v1"}})
    with pytest.raises(ParamError, match=r"vision\.base_url"):
        section(VisionParams, "vision", {"vision": {"base_url": "x:8000", "model": "m"}})
    ap = section(AnswerParams, "answer", {"answer": {}, "vision": {"base_url": "http://x/v1", "model": "m"}})
    assert ap.vision.answers_with_figures and ap.vision.max_images_per_call == 2


def test_a_missing_png_is_one_clear_error_naming_it(tmp_path):
    from stages.core.common.dataio import InputError

    missing = str(tmp_path / "gone.png")
    with pytest.raises(InputError, match=r"gone\.png: the figure's PNG cannot be read.*vision\.max_images_per_call"):
        data_url(missing, 768)
