"""Logging for stages and benches: our INFO lines, the HTTP libraries' only from WARNING.

The openai client logs one `HTTP Request: POST ...` line per call at INFO (through
httpx2/httpcore2), which buries a stage's progress bar under hundreds of lines. Set
TREERAG_HTTP_LOG=1 to see them again (e.g. to debug an endpoint).
"""
from __future__ import annotations

import logging
import os

LIBRARY_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2", "openai")


def setup_logging(level: int = logging.INFO) -> None:
    """basicConfig for the stage, and the HTTP libraries at WARNING unless TREERAG_HTTP_LOG is set."""
    logging.basicConfig(level=level, format="%(message)s")
    quiet = not os.environ.get("TREERAG_HTTP_LOG")
    for name in LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING if quiet else logging.NOTSET)
