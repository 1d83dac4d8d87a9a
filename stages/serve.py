"""The ask page: ``python -m stages.serve`` serves http://127.0.0.1:8765/ over the built index.

Type a question (and its answer unit, as in the questions file) and get the answer, the
cited documents with their URLs, the pointed units in their document tree, the whole
context and the timing, answered through the pipeline's own code path with the params in
params.yaml (stages/core/tools/serve.py), so the page shows what the submission would hold.
It binds to loopback unless told otherwise (``--host``); ``--port 0`` picks a free port.
``POST /api/ask`` with ``{"question": ..., "unit": ...}`` answers as JSON. Questions are taken by POST
only, and a browser's request from another site (its Origin or Sec-Fetch-Site header) is refused,
so no other page can make a user's browser spend LLM time.
"""
from __future__ import annotations

import argparse
import ipaddress
import logging
import signal
import sys
from pathlib import Path

from werkzeug.serving import make_server

from stages.core.common.artifacts import read_parquet
from stages.core.common.cli import run
from stages.core.common.dataio import doc_urls, read_metadata
from stages.core.common.inputs import data_params
from stages.core.common.params import load_params, section
from stages.core.embed.embedder import EmbeddingCache, EmbedParams, make_embedder
from stages.core.llm.params import LLMParams
from stages.core.llm.session import llm_session
from stages.core.retrieve.search import Retriever
from stages.core.tools.ask import AskParams
from stages.core.tools.serve import AskService, SerialRetriever, create_app, known_units

log = logging.getLogger("treerag.serve")


def port_number(text: str) -> int:
    """A TCP port 0..65535 (argparse type: anything else is a usage error, not a silently other port)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port: use 1..65535 (0: a free one)")
    return port


def _stop(*_: object) -> None:
    raise KeyboardInterrupt  # SIGTERM stops the server like Ctrl-C: the embedded LLM server shuts down cleanly


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m stages.serve", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    parser.add_argument("--port", type=port_number, default=8765, help="port (0: a free one)")
    parser.add_argument("--units-from", type=Path, action="append", default=[],
                        help="more questions CSVs whose answer units the page accepts")
    args = parser.parse_args()
    try:
        if not ipaddress.ip_address(args.host).is_loopback:
            log.warning("serve: binding %s, which is not loopback: anyone who can reach it can ask", args.host)
    except ValueError:
        log.warning("serve: binding %s (not a loopback address)", args.host)
    params = load_params()
    llm_params = section(LLMParams, "llm", params)
    ask = AskParams.from_params(params)
    meta = read_metadata(data_params(params).metadata)
    questions = Path(data_params(params).questions)
    # the units of the questions files next to data.questions (train, dev, test), the demos and --units-from
    unit_files = [*sorted(questions.parent.glob("*.csv")), Path(ask.answer.demo_file), *args.units_from]
    cache = EmbeddingCache()
    try:
        retriever = Retriever(Path("artifacts/index"), read_parquet("artifacts/tree/nodes.parquet", "build_tree"),
                              make_embedder(section(EmbedParams, "embed", params)), cache)
        titles = dict(zip(meta["id"].to_list(), meta["title"].to_list(), strict=True)) if "title" in meta.columns \
            else {}
        with llm_session(llm_params) as llm:
            service = AskService(ask, SerialRetriever(retriever), llm, set(meta["id"].to_list()), doc_urls(meta),
                                 titles, known_units(unit_files))
            server = make_server(args.host, args.port, create_app(service), threaded=True)
            print(f"serve: http://{args.host}:{server.server_port}/ (model {llm_params.model}; Ctrl-C stops)",
                  file=sys.stderr, flush=True)
            signal.signal(signal.SIGTERM, _stop)
            try:
                server.serve_forever()
            except KeyboardInterrupt:
                pass
            finally:
                server.server_close()
    finally:
        cache.close()


if __name__ == "__main__":
    run(main, "serve")
