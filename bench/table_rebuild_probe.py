"""Can the configured LLM rebuild the tables whose columns the text extraction glued together?

    python bench/table_rebuild_probe.py                      # every glued table, the embedded 1.5B
    python bench/table_rebuild_probe.py --limit 10 --out bench/results/table_rebuild_probe.json

About 67 of the tree's 108 WattBot tables keep several columns in one markdown cell
("| Model | Shards Output Length Max. Memory Util. Avg. SM Util. |" over "| | 4 256 23.36 95.00 |"),
so the answer step cannot turn them into records (answer/table_records.py) and the reader has
to count words. Session 43's held-out sets showed that more splitting rules, fitted to tables
someone has read, do not carry over to fresh tables. The other way named there: let an LLM
rebuild such a table once, at build time. This measures whether the model can, before any
pipeline code is written for it.

For each table node of artifacts/tree/nodes.parquet that `table_records` would leave as it is,
it asks the LLM (llm: section of params.yaml, the same response cache under its own file) for
{"columns": [...], "rows": [[...]]} and checks the reply the way a build step would have to:
every row as wide as the columns, as many rows as the table, and the words of the header and of
each row exactly the extracted ones (as multisets: nothing added, nothing dropped). A reply that
passes is "kept"; the JSON lists every table with its reply so the kept ones can be read.

Session 44, the embedded 1.5B, `--limit 30`: 2 of 30 kept, both the input copied unchanged; the model cannot
do it (docs/reader.md, "Can the embedded model rebuild the glued tables?").
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.chdir(ROOT)

import polars as pl  # noqa: E402
from tqdm import tqdm  # noqa: E402

from stages.core.answer.table_records import table_records  # noqa: E402
from stages.core.common.params import load_params, section  # noqa: E402
from stages.core.llm.params import LLMParams  # noqa: E402
from stages.core.llm.replies import parse_json_reply  # noqa: E402
from stages.core.llm.session import llm_session  # noqa: E402
from stages.core.tree.tables import table_parts  # noqa: E402

SYSTEM = (
    "You rebuild tables whose text extraction lost the column boundaries: a markdown table where one cell "
    "holds several columns. Reply with JSON {\"columns\": [...], \"rows\": [[...], ...]}: the column names, "
    "then every row of the table as a list with one cell per column (an empty string for an empty cell). "
    "Use every word and number of the extracted table exactly once, in its order; add nothing."
)
# a made-up table (not from any corpus), so the example teaches the format and not an answer
EXAMPLE_IN = ("Table 2: Energy of training runs.\n| Model | GPU Hours Energy (kWh) |\n|---|---|\n"
              "| BERT base | V100 12 3.4 |\n| GPT small | A100 30 9.1 |")
EXAMPLE_OUT = json.dumps({"columns": ["Model", "GPU", "Hours", "Energy (kWh)"],
                          "rows": [["BERT base", "V100", "12", "3.4"], ["GPT small", "A100", "30", "9.1"]]})
SCHEMA = {"type": "json_schema", "json_schema": {"name": "table", "strict": True, "schema": {
    "type": "object",
    "properties": {"columns": {"type": "array", "items": {"type": "string"}},
                   "rows": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}},
    "required": ["columns", "rows"]}}}


def _words(cells: list[str]) -> Counter[str]:
    return Counter(w for c in cells for w in c.split())


def check(reply: dict[str, Any] | None, header: list[str], rows: list[list[str]]) -> str:
    """'kept' when the reply is the extracted table regrouped; else why not."""
    if not reply or not isinstance(reply.get("columns"), list) or not isinstance(reply.get("rows"), list):
        return "no table"
    cols, out = reply["columns"], reply["rows"]
    if len(cols) < 2:
        return "under 2 columns"
    if len(out) != len(rows):
        return f"{len(out)} rows for {len(rows)}"
    if any(len(r) != len(cols) for r in out):
        return "a row not as wide as the columns"
    if _words(cols) != _words(header):
        return "header words changed"
    if any(_words(o) != _words(r) for o, r in zip(out, rows)):
        return "row words changed"
    return "kept"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=0, help="first N glued tables only (0: all)")
    ap.add_argument("--out", type=Path, default=Path("bench/results/table_rebuild_probe.json"))
    args = ap.parse_args()
    all_params = load_params()
    params = section(LLMParams, "llm", all_params)
    nodes = pl.read_parquet("artifacts/tree/nodes.parquet").filter(pl.col("attachment_type") == "table")
    # the answer step's own test: a table it does not show as records
    glued = [r for r in nodes.iter_rows(named=True) if table_records(r["text"]) == r["text"]]
    glued = glued[: args.limit] if args.limit else glued
    results, t_all = [], time.perf_counter()
    with llm_session(params, cache_name="table_rebuild_probe.sqlite") as llm:
        for r in tqdm(glued, desc="tables"):
            _, header, rows = table_parts(r["text"], cut_caption=False)
            c = llm.complete([{"role": "system", "content": SYSTEM},
                              {"role": "user", "content": EXAMPLE_IN}, {"role": "assistant", "content": EXAMPLE_OUT},
                              {"role": "user", "content": r["text"]}],
                             temperature=0.0, seed=0, max_tokens=2048, response_format=SCHEMA)
            reply = parse_json_reply(c.text)
            results.append({"node_id": r["node_id"], "verdict": check(reply, header, rows),
                            "latency_s": round(c.latency_s, 1), "completion_tokens": c.completion_tokens,
                            "extracted": r["text"], "reply": reply})
    verdicts = Counter(x["verdict"] for x in results)
    summary = {"command": "python bench/table_rebuild_probe.py" + (f" --limit {args.limit}" if args.limit else ""),
               "model": params.model, "base_url": params.base_url or "embedded",
               "tables_in_tree": nodes.height, "glued_tables": len(results),
               "kept": verdicts.get("kept", 0), "verdicts": dict(verdicts.most_common()),
               "llm_s": round(sum(x["latency_s"] for x in results), 1),
               "wall_s": round(time.perf_counter() - t_all, 1), "tables": results}
    args.out.write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps({k: v for k, v in summary.items() if k != "tables"}, indent=1))


if __name__ == "__main__":
    main()
