"""Under a document prior, a question that asks about a financial statement reaches that statement's page
(stages/core/retrieve/statements.py): which statements a question asks about, which page of a filing is
each statement, and the retrieval over a real tiny LanceDB index that puts that page's rows first."""
from __future__ import annotations

import numpy as np
import polars as pl
from test_doc_cards import retriever  # tests/ is on sys.path (conftest.py)

from stages.core.index.store import IndexParams, build_index
from stages.core.plan.metrics import operand_names
from stages.core.retrieve.params import RetrieveParams
from stages.core.retrieve.search import Retriever, with_plurals
from stages.core.retrieve.statements import (StatementPages, asked_kinds, number_share, page_scores,
                                             statement_words_apart)

CASH_FLOWS = ["Cash flows from operating activities",
              "Net income 5,363 4,869 5,058",
              "Depreciation and amortization 1,488 1,544 1,474",
              "Net cash provided by operating activities 6,439 6,240 6,662",
              "Purchases of property, plant and equipment (1,577) (1,373) (1,420)",
              "Net cash used in investing activities (222) (3,086) (1,403)",
              "Dividends paid (3,193) (2,803) (2,678)",
              "Net cash used in financing activities (6,701) (2,655) (4,626)"]
PROSE = [("Cash flows from operating activities rose as net income grew; net cash provided by operating activities "
          "funded purchases of property, plant and equipment, and net cash used in investing activities and in "
          "financing activities (dividends paid) fell. Capital expenditure was in line with depreciation.")]


def test_a_question_asks_for_a_statement_by_its_name_or_by_a_metric_from_its_lines():
    assert asked_kinds("Using the cash flow statement, what was FY2018 capex?") == ["cash flow"]
    assert asked_kinds("What is the year end FY2018 net PPNE? Use the balance sheet.") == ["balance sheet"]
    assert asked_kinds("Is the quick ratio healthy for FY 2022?") == ["balance sheet"]
    assert asked_kinds("Did the operating margin improve in FY2022?") == ["income statement"]
    assert asked_kinds("What is the capex as a % of revenue?") == ["cash flow", "income statement"]
    assert asked_kinds("What is the FY2022 retention ratio?") == ["cash flow", "income statement"]
    assert asked_kinds("What is the FY2019 cash conversion cycle?") == ["balance sheet", "income statement"]
    assert asked_kinds("Who is the new CEO?") == []


def test_a_page_is_a_statement_by_its_rows_even_when_its_title_is_lost():
    rows = page_scores(CASH_FLOWS)
    assert rows["cash flow"] >= 4 and rows["cash flow"] > rows["balance sheet"]
    titled = page_scores(["Consolidated Statement of Cash Flow s", *CASH_FLOWS])  # a title a PDF font split
    assert titled["cash flow"] == rows["cash flow"] + 3
    assert number_share(CASH_FLOWS) > 0.3 and number_share(PROSE) == 0.0


def statement_nodes(pages: dict[int, list[str]] | None = None) -> pl.DataFrame:
    """One filing: page 1 a discussion that names the cash flow lines in prose, page 2 the statement
    (no title), page 3 its continuation, page 4 unrelated (or the given pages); another filing with no
    statement."""
    pages = pages or {1: PROSE, 2: CASH_FLOWS[:5], 3: CASH_FLOWS[5:], 4: ["Our employees and our culture matter."]}
    rows = [("acme", None, "document", "acme", "", 0, None, False), ("acme:sec0", "acme", "section", "acme", "", 0, None,
                                                                      False)]
    rows.append(("acme:sec0:p0", "acme:sec0", "paragraph", "acme", "ACME ROCKET WORKS annual report fiscal 2018",
                 0, 1, True))
    k = 1
    for page, texts in pages.items():
        for t in texts:
            pid = f"acme:sec0:p{k}"
            rows += [(pid, "acme:sec0", "paragraph", "acme", t, k, page, False),
                     (f"{pid}:s0", pid, "sentence", "acme", t, 0, page, False)]
            k += 1
    rows += [("globex", None, "document", "globex", "", 0, None, False),
             ("globex:sec0", "globex", "section", "globex", "", 0, None, False),
             ("globex:sec0:p0", "globex:sec0", "paragraph", "globex", "GLOBEX TURBINES annual report fiscal 2018",
              0, 1, True),
             ("globex:sec0:p1", "globex:sec0", "paragraph", "globex", "Capital expenditure on turbines was 90.", 1, 1,
              False),
             ("globex:sec0:p1:s0", "globex:sec0:p1", "sentence", "globex", "Capital expenditure on turbines was 90.",
              0, 1, False)]
    return pl.DataFrame(rows, orient="row", schema=["node_id", "parent_id", "level", "doc_id", "text", "ordinal",
                                                    "page", "is_front_matter"]).with_columns(
        pl.col("page").alias("page_end"), pl.lit(None, dtype=pl.String).alias("attachment_type"),
        pl.lit(False).alias("is_reference"))


def test_the_statement_page_is_the_page_of_numbers_not_the_prose_that_names_its_lines():
    pages = StatementPages(statement_nodes())
    assert pages.pages("acme") == {"cash flow": [2, 3]}  # the statement and its continuation
    assert pages.pages("globex") == {}
    ids = pages.node_ids(["acme"], ["cash flow"])
    assert "acme:sec0:p4" in ids and "acme:sec0:p1" not in ids
    assert pages.node_ids(["acme"], ["balance sheet"]) == set()


def statement_retriever(tmp_path, nodes: pl.DataFrame | None = None) -> Retriever:
    nodes = statement_nodes() if nodes is None else nodes
    searchable = nodes.filter(pl.col("level").is_in(["paragraph", "sentence"]))
    rng = np.random.default_rng(3)
    vecs = [v / np.linalg.norm(v) for v in rng.normal(size=(searchable.height, 8)).astype(np.float32)]
    vectors = searchable.select("node_id", "level", "doc_id").with_columns(
        pl.Series("vector", np.stack(vecs), dtype=pl.Array(pl.Float32, 8)))
    meta = pl.DataFrame({"id": ["acme", "globex"], "title": ["Annual report"] * 2, "company": ["Acme", "Globex"],
                         "fiscal_year": ["2018", "2018"]})
    build_index(nodes, vectors, meta, tmp_path, IndexParams(ann_min_rows=10_000), "toy")
    return retriever(tmp_path, nodes)


def test_under_the_prior_the_named_filings_statement_rows_lead_the_context(tmp_path):
    r = statement_retriever(tmp_path)
    q = ["What was Acme's FY2018 capital expenditure? Use the cash flow statement."]
    prior = r.retrieve(q, RetrieveParams(max_context_tokens=120, named_docs="prior"))
    assert prior[0].doc_id == "acme" and prior[0].page in (2, 3)  # a row of the statement (pages 2-3) first
    none = r.retrieve(q, RetrieveParams(max_context_tokens=120))
    assert none[0].page not in (2, 3)  # without naming, no statement lead: the prose that says the words wins
    # a question that asks about no statement retrieves as before the lead existed
    assert r.statement_lead("Who leads Acme?", "Who leads", {"acme": 2.0}) == []


def test_keyword_search_restricted_to_some_nodes(tmp_path):
    r = statement_retriever(tmp_path)
    only = {"acme:sec0:p5", "acme:sec0:p5:s0"}
    hits = r.index.keyword("net cash investing activities", 5, doc_weights={"acme": 2.0}, only=only)
    assert hits and all(ids[0] in only for ids, _ in hits)
    assert r.index.keyword("net cash", 5, only=set()) == []



def test_the_statements_name_ranks_no_row_of_its_page(tmp_path):
    """Every row of a statement's page is labelled with its title, so the rows are ranked by the question's
    other words: the line item it asks for, not the headers that repeat the statement's name."""
    assert statement_words_apart("What was FY2018 capex? Use the consolidated statements of cash flows.") == \
        "What was FY2018 capex? Use the ."
    assert statement_words_apart("Per the balance sheet and the income statement, and the statement of "
                                 "financial position") == "Per the and the , and the"
    assert statement_words_apart("Did cash flow from operations grow?") == "Did cash flow from operations grow?"
    r = statement_retriever(tmp_path)
    text = dict(zip(*statement_nodes().select("node_id", "text")))
    lead = r.statement_lead("What was Acme's FY2018 net income? Use the statement of cash flows.",
                            "What was FY2018 net income? Use the statement of cash flows.", {"acme": 2.0}, 0.2)
    assert text[lead[0][0][0]].startswith("Net income")


def test_a_metric_leads_with_the_rows_of_its_line_items(tmp_path):
    """A metric's name is no row of a statement: its operands' line items rank the rows."""
    assert operand_names("What is the FY2018 free cash flow?") == [
        "net cash provided by operating activities", "purchases of property, plant and equipment capital expenditure"]
    assert operand_names("Who is the CEO?") == []
    # a line item asked by a name statements do not print is searched by its line's names too
    assert operand_names("What is the FY2018 capital expenditure amount (in USD millions)?") == [
        "purchases of property, plant and equipment capital expenditure"]
    r = statement_retriever(tmp_path)
    text = dict(zip(*statement_nodes().select("node_id", "text")))
    lead = r.statement_lead("What was Acme's FY2018 free cash flow? Use the cash flow statement.",
                            "What was FY2018 free cash flow? Use the cash flow statement.", {"acme": 2.0}, 0.4)
    assert any(text[ids[0]].startswith("Purchases of property, plant and equipment") for ids, _ in lead)


INCOME = ["Revenues 12,000 11,000 10,500", "Cost of revenues (7,000) (6,600) (6,100)", "Gross profit 5,000 4,400 4,400",
          "Operating income 1,900 1,500 1,600", "Net income 1,300 1,100 1,150", "Diluted earnings per share 2.10 1.80",
          "Weighted average shares outstanding 620 611"]
BALANCE = ["Cash and cash equivalents 2,000 1,800", "Accounts receivable, net 1,500 1,400", "Inventories 900 850",
           "Total current assets 4,400 4,050", "Property, plant and equipment, net 6,000 5,800", "Goodwill 3,100 3,100",
           "Total assets 15,000 14,200", "Accounts payable 1,200 1,150", "Total current liabilities 3,300 3,000",
           "Long-term debt 4,000 4,100", "Total liabilities 9,000 8,800", "Retained earnings 5,000 4,500",
           "Total shareholders' equity 6,000 5,400"]


def test_a_metric_of_two_statements_leads_with_a_row_of_each_of_its_line_items(tmp_path):
    """Asset turnover takes revenue from the income statement and total assets from the balance sheet:
    each line item ranks rows by its own words, the items taking turns, so the few lead rows hold both
    (ranked together, the many "total ... assets" rows would fill the lead); and "Revenues" is found by
    the item's "revenue" (keyword search does not stem)."""
    assert with_plurals("total revenue net sales") == "total totals revenue revenues net nets sales"
    nodes = statement_nodes({1: PROSE, 2: INCOME, 3: BALANCE})
    r = statement_retriever(tmp_path, nodes)
    text = dict(zip(*nodes.select("node_id", "text")))
    q = "What is Acme's FY2018 asset turnover ratio? Use the income statement and the balance sheet."
    lead = r.statement_lead(q, r.keyword_query(q, {"acme": 2.0}), {"acme": 2.0}, 0.4)
    firsts = [text[ids[0]].split(" ")[0] for ids, _ in lead]
    assert len(lead) == 2 and "Revenues" in firsts and any(text[ids[0]].startswith("Total assets") for ids, _ in lead)


STATEMENT_TABLE = "\n".join([
    "CONSOLIDATED STATEMENTS OF OPERATIONS (Amounts in millions) For the Years Ended December 31,",
    "| | 2019 | 2018 | 2017 |", "|---|---|---|---|",
    "| Net revenues | | | |", "| Product sales | 1,975 | 2,255 | 2,110 |",
    "| Subscription, licensing, and other revenues | 4,514 | 5,245 | 4,907 |",
    "| Total net revenues | 6,489 | 7,500 | 7,017 |", "| Product costs | 656 | 719 | 733 |",
    "| Game operations and distribution costs | 965 | 1,028 | 984 |", "| Product development | 998 | 1,101 | 1,069 |",
    "| Sales and marketing | 926 | 1,062 | 1,378 |", "| General and administrative | 732 | 822 | 745 |",
    "| Total costs and expenses | 4,882 | 5,512 | 5,708 |", "| Operating income | 1,607 | 1,988 | 1,309 |",
    "| Net income | 1,503 | 1,848 | 273 |", "| Weighted-average number of shares outstanding | | | |",
    "| Basic | 767 | 762 | 754 |", "| Diluted | 771 | 771 | 766 |"])


def test_a_long_statement_table_is_cut_to_the_rows_of_the_metrics_line_items(tmp_path):
    """A statement set as one long table is cut to the rows the question asks about; in a named filing
    those include its metric's line items, so a turnover keeps "Total net revenues", not only the
    "Net revenues" heading over empty cells."""
    from stages.core.tree.tables import table_row_sentences
    nodes = statement_nodes({1: PROSE, 3: ["Property and equipment, net 253 282", "Total assets 19,845 17,890"]})
    rows = [("acme:sec0:p9", "acme:sec0", "paragraph", "acme", STATEMENT_TABLE, 9, 2, False)]
    rows += [(f"acme:sec0:p9:s{k}", "acme:sec0:p9", "sentence", "acme", t, k, 2, False)
             for k, t in enumerate(table_row_sentences(STATEMENT_TABLE))]
    table = pl.DataFrame(rows, orient="row", schema=["node_id", "parent_id", "level", "doc_id", "text", "ordinal",
                                                     "page", "is_front_matter"]).with_columns(
        pl.col("page").alias("page_end"), pl.lit("table").alias("attachment_type"), pl.lit(False).alias("is_reference"))
    r = statement_retriever(tmp_path, pl.concat([nodes, table.select(nodes.columns)]))
    q = ("What is Acme's FY2019 fixed asset turnover ratio? Fixed asset turnover ratio is defined as: FY2019 revenue / "
         "(average PP&E between FY2018 and FY2019). Use the income statement and the balance sheet.")
    units = r.retrieve([q], RetrieveParams(max_context_tokens=400, named_docs="prior"))
    cut = next(u for u in units if u.media == "table")
    assert "| Total net revenues | 6,489 |" in cut.text and "Game operations" not in cut.text
