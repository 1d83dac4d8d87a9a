"""The run report as one self-contained HTML page (Jinja2 templates in ./templates, autoescaped).

Every value on the page comes from `report_data.build_report_data` and goes through Jinja2's
autoescape, so a document line holding ``<script>`` or a reply holding HTML shows as text.
The page needs no network: the style and the small filter/sort script are inlined from
this package's templates, the plots are PNG data URIs, and a Content-Security-Policy
(``default-src 'none'``) stops the browser from loading anything else.
"""
from __future__ import annotations

import base64
from functools import lru_cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from stages.core.score.report_data import QUOTE_NGRAM

TEMPLATES = Path(__file__).with_name("templates")


@lru_cache(maxsize=4)
def environment(*extra_dirs: str) -> Environment:
    """The Jinja2 environment: autoescape on for every template, undefined names an error;
    ``extra_dirs`` (e.g. the ask page's templates) are searched before this package's."""
    env = Environment(loader=FileSystemLoader([*extra_dirs, str(TEMPLATES)]), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals.update(css=Markup((TEMPLATES / "_base.css").read_text(encoding="utf-8")),
                       js=Markup((TEMPLATES / "report.js").read_text(encoding="utf-8")), quote_ngram=QUOTE_NGRAM)
    return env


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def render_report(data: dict[str, Any], pngs: dict[str, bytes] | None = None) -> str:
    """The report page for `data` (`build_report_data`), with the plots inlined."""
    plots = {name: data_uri(b) for name, b in (pngs or {}).items()} if data["labelled"] else {}
    return environment().get_template("report.html").render(r=data, plots=plots)
