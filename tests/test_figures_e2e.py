"""End to end: a real PDF with an embedded figure through the real extract → caption → build_tree →
embed → index → plan → retrieve → answer → vote → score (`dvc repro`), with a vision endpoint: the
answer stage sends the figure's pixels to it (decoded and checked here), a rerun asks nothing (cache),
and with `vision.base_url` empty no request carries an image. Two local fake OpenAI-compatible
endpoints stand in for the text and the vision model; the embedder is the real local MiniLM."""
from __future__ import annotations

import base64
import csv
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import polars as pl
import pymupdf
import yaml
from tiny_project import dvc, make_project

FIGURE_RGB = (250, 40, 40)  # the fake vision model reads the answer from the pixels: red = 250 W
FIGURE_PX = (400, 200)
CAPTION = "Figure 1: Peak power of the X100 accelerator."
DESCRIPTION = "A single bar showing the power of the accelerator."
QUESTION = "What peak power does Figure 1 show for the X100 accelerator?"


def make_figure_pdf(path: Path) -> None:
    pix = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, *FIGURE_PX), False)
    pix.set_rect(pix.irect, FIGURE_RGB)
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "1 Accelerators", fontsize=14, fontname="hebo")
    page.insert_text((72, 100), "The X100 accelerator was profiled under a full training load.", fontsize=10)
    page.insert_image(pymupdf.Rect(72, 120, 472, 320), stream=pix.tobytes("png"))
    page.insert_text((72, 340), CAPTION, fontsize=10)
    page.insert_text((72, 380), "The profile lasted one week in a single rack.", fontsize=10)
    doc.save(path)


def fill(schema: dict[str, Any], overrides: dict[str, Any]) -> Any:
    """A value of the JSON schema (the typed reader's reply formats), with ``overrides`` by property."""
    if "anyOf" in schema:
        return fill(schema["anyOf"][0], overrides)
    t = schema.get("type")
    if t == "object":
        return {k: overrides[k] if k in overrides else fill(v, overrides) for k, v in schema["properties"].items()}
    if t == "array":
        return [1]
    return {"number": 1, "integer": 1, "boolean": True, "string": "x"}.get(t)


class Endpoint:
    """A fake OpenAI-compatible chat endpoint that records every request body."""

    def __init__(self, vision: bool) -> None:
        self.vision = vision
        self.bodies: list[dict[str, Any]] = []
        self.seen: list[dict[str, Any]] = []  # vision: what each answer request's first image decodes to
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> Endpoint:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reply(self, body: dict[str, Any]) -> str:
        user = body["messages"][-1]["content"]
        parts = user if isinstance(user, list) else [{"type": "text", "text": user}]
        images = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        if not schema:  # the caption stage's description request
            return DESCRIPTION if images else ""
        overrides: dict[str, Any] = {}
        if images:  # read the answer from the figure's pixels, point at its unit
            head, b64 = images[0].split(",", 1)
            pix = pymupdf.Pixmap(base64.b64decode(b64))
            rgb = pix.pixel(pix.width // 2, pix.height // 2)[:3]
            before = next(p["text"] for p in parts if p["type"] == "text")
            unit = re.findall(r"\[(\d+)\] \S+ \(image\)", before)
            with self.lock:
                self.seen.append({"url": images[0], "head": head, "size": (pix.width, pix.height), "rgb": rgb})
            overrides = {"value": rgb[0], "units": [int(unit[-1])] if unit else [1]}
        return json.dumps(fill(schema, overrides))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - the client checks /v1/models first
                self._send({"object": "list", "data": [{"id": "fake", "object": "model"}]})

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with endpoint.lock:
                    endpoint.bodies.append(body)
                self._send({"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": endpoint.reply(body)}}],
                            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

        return Handler


def image_parts(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for m in body["messages"] if isinstance(m["content"], list) for p in m["content"]
            if p.get("type") == "image_url"]


def set_params(proj: Path, **sections: dict[str, Any]) -> None:
    params = yaml.safe_load((proj / "params.yaml").read_text())
    for name, values in sections.items():
        params[name].update(values)
    (proj / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


def test_figure_pixels_reach_the_vision_endpoint_cached_and_off_without_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TREERAG_CACHE_DIR", str(tmp_path / "cache"))
    proj = make_project(tmp_path)
    make_figure_pdf(proj / "data" / "corpus" / "x100.pdf")
    with (proj / "data" / "metadata.csv").open("a", newline="") as f:
        csv.writer(f).writerow(["x100", "report", "X100 profile", "2024", "Acme (2024). X100.", "https://e.org/x"])
    with (proj / "data" / "questions.csv").open("a", newline="") as f:
        csv.writer(f).writerow(["q4", QUESTION, "250 W", "250", "W", "['x100']", "is_blank", "is_blank", "Figure"])
    with Endpoint(vision=False) as text, Endpoint(vision=True) as vision:
        set_params(proj, llm={"base_url": text.base_url, "model": "fake-text"},
                   vision={"base_url": vision.base_url, "model": "fake-vlm", "max_image_px": 256, "detail": "low"},
                   plan={"n_queries": 1}, ensemble={"n": 1})
        dvc(proj, "init", "--no-scm", "-q")
        first = dvc(proj, "repro")

        # the figure was extracted, described by the vision model and is an image node
        (png,) = sorted((proj / "artifacts" / "extract" / "images").glob("x100_*.png"))
        file_pix = pymupdf.Pixmap(png.read_bytes())
        assert (file_pix.width, file_pix.height) == FIGURE_PX and file_pix.pixel(5, 5)[:3] == FIGURE_RGB
        captions = pl.read_parquet(proj / "artifacts" / "caption" / "captions.parquet")
        assert captions.filter(pl.col("doc_id") == "x100")["caption"].to_list() == [f"{CAPTION}\n{DESCRIPTION}"]

        # the answer requests with the figure in context went to the vision endpoint with its pixels
        answer_calls = [b for b in vision.bodies if b.get("response_format")]
        assert answer_calls and all(image_parts(b) for b in answer_calls)
        assert {b["model"] for b in answer_calls} == {"fake-vlm"}
        assert all(p["image_url"]["detail"] == "low" for b in answer_calls for p in image_parts(b))
        from stages.core.answer.images import data_url

        for seen in vision.seen:  # the figure's own PNG, downscaled to max_image_px: same colour, same aspect
            assert seen["head"] == "data:image/png;base64"
            assert seen["size"] == (256, 128) and seen["rgb"] == FIGURE_RGB
            assert seen["url"] == data_url(str(png), 256)
        # every other call went to the text endpoint, none of them with an image
        assert text.bodies and not any(image_parts(b) for b in text.bodies)
        assert "figures: " in first and "image context units carry their pixels" in first

        with (proj / "submissions" / "submission.csv").open() as f:
            rows = {r["id"]: r for r in csv.DictReader(f)}
        assert rows["q4"]["answer_value"] == "250" and rows["q4"]["ref_id"] == "['x100']"
        columns = ["question_id", "answer_value", "ref_id", "raw"]
        answers = pl.read_parquet(proj / "artifacts" / "answers" / "run_0.parquet").select(columns)

        # a rerun of the answer stage asks neither endpoint again: every reply comes from the cache
        n_text, n_vision = len(text.bodies), len(vision.bodies)
        dvc(proj, "repro", "-f", "-s", "answer")
        assert (len(text.bodies), len(vision.bodies)) == (n_text, n_vision)
        again = pl.read_parquet(proj / "artifacts" / "answers" / "run_0.parquet")
        assert again.select(columns).equals(answers) and again["cache_hits"].sum() == again["attempts"].sum()

        # without a vision endpoint: captions as today, no request carries an image, none goes to vision
        set_params(proj, vision={"base_url": "", "model": ""})
        third = dvc(proj, "repro")
        assert "Running stage 'answer'" in third
        assert len(vision.bodies) == n_vision
        assert len(text.bodies) > n_text and not any(image_parts(b) for b in text.bodies)
        assert "image context units carry their pixels" not in third
        captions = pl.read_parquet(proj / "artifacts" / "caption" / "captions.parquet")
        assert captions.filter(pl.col("doc_id") == "x100")["caption"].to_list() == [CAPTION]
