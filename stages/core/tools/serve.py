"""The ask page: a local web server over the built index that answers one question at a time
exactly as the pipeline would (``python -m stages.serve``).

A question goes through `tools.ask.ask_question` (plan → retrieve → answer_members → vote →
submission row, the stages' own functions and params), and its result is turned into the run
report's per-question data by `score.report_data.build_report_data`, so the page shows the
context exactly as the reader saw it (member view, level, numbering, table records) with the
same Jinja2 macros as the run report. Flask serves it; Werkzeug's threaded WSGI server
answers requests concurrently. Each request builds its own frames; the retriever (its
embedder, SQLite caches and Lance index) is shared and called under a lock, while the LLM
client is thread-safe (the embedded server has ``llm.max_concurrency`` slots and queues the rest).

Bad input never reaches the pipeline: an empty or over-long question, an over-long or
unknown answer unit gets a 400 with a message; any other failure a 500 with its one-line
message, never a traceback. Everything shown is data: Jinja2's autoescape renders a
document's ``<script>`` or a reply's HTML as text.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import polars as pl
from flask import Flask, abort, jsonify, render_template, request
from markupsafe import Markup
from werkzeug.exceptions import HTTPException

from stages.core.common.dataio import read_csv_tolerant
from stages.core.common.values import BLANK
from stages.core.llm.protocol import LLM
from stages.core.retrieve.search import CONTEXT_SCHEMA, Retriever, context_rows
from stages.core.score.report_data import RunInputs, build_report_data
from stages.core.score.report_html import TEMPLATES as REPORT_TEMPLATES
from stages.core.tools.ask import ASK_ID, AskParams, AskResult, ask_question

log = logging.getLogger("treerag.serve")
TEMPLATES = Path(__file__).with_name("templates")
MAX_QUESTION_CHARS = 2000
MAX_UNIT_CHARS = 100


class BadRequest(ValueError):
    """A request the page refuses, with the message to show."""


def known_units(paths: Iterable[Path]) -> set[str]:
    """The answer units of the questions files (`answer_unit` column), plus blank."""
    units = {BLANK}
    for p in paths:
        if p.exists():
            df = read_csv_tolerant(p)
            if "answer_unit" in df.columns:
                units |= {u.strip() for u in df["answer_unit"].drop_nulls().to_list() if u.strip()}
    return units


class SerialRetriever:
    """The retriever with its `retrieve` calls one at a time (its embedder and caches are shared)."""

    def __init__(self, inner: Retriever) -> None:
        self.inner = inner
        self.tree = inner.tree
        self._lock = threading.Lock()

    def retrieve(self, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return self.inner.retrieve(*args, **kwargs)


@dataclass
class AskService:
    """What answering needs, loaded once: params, retriever, LLM client, metadata, allowed units."""

    params: AskParams
    retriever: Any  # Retriever or SerialRetriever
    llm: LLM | None
    corpus_ids: set[str]
    urls: dict[str, str]
    titles: dict[str, str] = field(default_factory=dict)
    units: set[str] = field(default_factory=lambda: {BLANK})
    sections: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        tree = self.retriever.tree
        if not self.sections:
            self.sections = {n.node_id: (n.title or "").strip()[:120] for n in tree.nodes.values()
                             if n.level == "section"}

    def validate(self, question: Any, unit: Any) -> tuple[str, str]:
        """The question and unit, or BadRequest with the reason."""
        if not isinstance(question, str) or not question.strip():
            raise BadRequest("Type a question: it is empty.")
        if len(question) > MAX_QUESTION_CHARS:
            raise BadRequest(f"The question is {len(question)} characters; at most {MAX_QUESTION_CHARS} are accepted.")
        unit = "" if unit is None else unit
        if not isinstance(unit, str):
            raise BadRequest("The answer unit must be text.")
        unit = unit.strip()  # empty: the answer stage infers kind and unit from the question
        if len(unit) > MAX_UNIT_CHARS:
            raise BadRequest(f"The answer unit is {len(unit)} characters; at most {MAX_UNIT_CHARS} are accepted.")
        if unit and unit not in self.units:
            raise BadRequest(f"Unknown answer unit {unit!r}: use one of the units of the questions files "
                             f"(e.g. {', '.join(sorted(u for u in self.units if u != BLANK)[:8])}) or leave it empty.")
        return " ".join(question.split()), unit

    def ask(self, question: str, unit: str) -> dict[str, Any]:
        """One question through the pipeline; the page's data (the report's per-question dict and more)."""
        t0 = time.perf_counter()
        res = ask_question(question, unit, self.params, self.retriever, self.llm, self.corpus_ids, self.urls)
        wall = time.perf_counter() - t0
        return self.page_data(question, unit, res, wall)

    def page_data(self, question: str, unit: str, res: AskResult, wall_s: float) -> dict[str, Any]:
        rows = [r for k, units in enumerate(res.attempts) for r in context_rows(ASK_ID, k, units)]
        run = RunInputs(pl.DataFrame({"id": [ASK_ID], "question": [question], "answer_unit": [unit]}),
                        pl.DataFrame([res.submission]) if res.submission else None,
                        pl.DataFrame(rows, schema=CONTEXT_SCHEMA),
                        [pl.DataFrame([m]) for m in res.members], self.sections, self.params.answer,
                        self.params.ensemble, "ask")
        q = build_report_data(run)["questions"][0]
        q["id"] = ""
        refs = []
        for doc in q["pred"]["refs"]:
            refs.append({"id": doc, "title": self.titles.get(doc, ""), "url": self.urls.get(doc, "")})
        tree = self.tree_of_pointed(q)
        llm_s = sum(m["latency_s"] for m in q["members"])
        return {"question": question, "unit": unit, "q": q, "refs": refs, "tree": tree, "queries": res.queries,
                "planner_fell_back": res.planner_fell_back, "abstained": q["pred"]["value"] == BLANK,
                "timing": {"total_s": round(wall_s, 3), "llm_s": round(llm_s, 3),
                           "calls": sum(m["attempts"] for m in q["members"]),
                           "cached": sum(int(m.get("cache_hits") or 0) for m in res.members),
                           "shared": sum(int(m.get("shared") or 0) for m in res.members)}}

    def tree_of_pointed(self, q: dict[str, Any]) -> list[dict[str, Any]]:
        """The units member 0 pointed at, as document → section → paragraph → unit."""
        tree = self.retriever.tree
        docs: dict[str, dict[str, Any]] = {}
        for u in q["contexts"].get(q["primary"], []):
            if not u["pointed_by"]:
                continue
            d = docs.setdefault(u["doc_id"], {"id": u["doc_id"], "title": self.titles.get(u["doc_id"], ""),
                                              "url": self.urls.get(u["doc_id"], ""), "sections": {}})
            sec = d["sections"].setdefault(u["section"] or "", {"id": u["section"] or "(no section)",
                                                                 "title": u["section_title"], "units": []})
            para = tree.paragraph_of(u["node_id"]) if u["node_id"] in tree.nodes else None
            ptext = tree.nodes[para].text if para and para in tree.nodes else ""
            sec["units"].append({**u, "paragraph": para, "paragraph_text": ptext if ptext != u["text"] else ""})
        return [{**d, "sections": list(d["sections"].values())} for d in docs.values()]


def create_app(service: AskService) -> Flask:
    """The Flask app: GET / (the form), POST /ask (the page), POST /api/ask (JSON); a cross-site POST is refused."""
    app = Flask("treerag.serve", template_folder=str(TEMPLATES))
    app.jinja_env.autoescape = True
    app.jinja_loader.searchpath.append(str(REPORT_TEMPLATES))  # type: ignore[union-attr]
    app.jinja_env.globals.update(css=Markup((REPORT_TEMPLATES / "_base.css").read_text(encoding="utf-8")))
    app.config["MAX_CONTENT_LENGTH"] = 64 * 1024
    units = sorted(u for u in service.units if u != BLANK)

    def page(status: int = 200, **kw: Any) -> tuple[str, int]:
        return render_template("ask.html", units=units, max_chars=MAX_QUESTION_CHARS,
                               **{"question": "", "unit": "", "result": None, "error": None, **kw}), status

    def answer(question: Any, unit: Any) -> dict[str, Any]:
        q, u = service.validate(question, unit)
        return service.ask(q, u)

    @app.get("/")
    def index() -> tuple[str, int]:
        return page()

    @app.before_request
    def same_origin() -> None:
        """A question costs LLM time: only this page's own form (or a client that is no browser) may ask
        one. A browser names where a request comes from (Sec-Fetch-Site, Origin); a link or form of
        another site, which would make the user's browser ask, is refused."""
        if request.method != "POST":
            return
        site = request.headers.get("Sec-Fetch-Site", "")
        origin = request.headers.get("Origin", "")
        if site and site not in ("same-origin", "none"):
            abort(403, f"a {site} request: questions are taken only from this page")
        if origin and urlsplit(origin).netloc != request.host:
            abort(403, f"a request from {origin}: questions are taken only from this page")

    @app.post("/ask")  # POST only: a GET (a link, an <img> on any site) never runs the pipeline
    def ask_page() -> tuple[str, int]:
        question, unit = request.form.get("question"), request.form.get("unit", "")
        try:
            return page(result=answer(question, unit), question=question, unit=unit)
        except BadRequest as e:
            return page(400, error=str(e), question=question or "", unit=unit or "")

    @app.post("/api/ask")
    def ask_api() -> Any:
        body = request.get_json(silent=True)
        if not isinstance(body, dict):
            return jsonify(error="Send a JSON object {\"question\": ..., \"unit\": ...}."), 400
        try:
            data = answer(body.get("question"), body.get("unit", ""))
        except BadRequest as e:
            return jsonify(error=str(e)), 400
        q = data["q"]
        return jsonify(answer_value=q["pred"]["value"], answer_unit=q["pred"]["unit"], ref_id=q["pred"]["refs"],
                       refs=data["refs"], supporting_materials=q["pred"]["supporting"], queries=data["queries"],
                       members=[{k: m[k] for k in ("i", "value", "refs", "grounded", "pointers", "skipped")}
                                for m in q["members"]],
                       context=q["contexts"].get(q["primary"], []), timing=data["timing"])

    @app.errorhandler(HTTPException)
    def http_error(e: HTTPException) -> Any:
        msg = f"{e.code} {e.name}: {e.description}"
        if request.path.startswith("/api/"):
            return jsonify(error=msg), e.code
        return page(e.code or 500, error=msg)

    @app.errorhandler(Exception)
    def failure(e: Exception) -> Any:
        log.exception("serve: %s failed", request.path)  # the traceback goes to the server's log only
        msg = f"The question could not be answered: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        if request.path.startswith("/api/"):
            return jsonify(error=msg), 500
        return page(500, error=msg)

    return app
