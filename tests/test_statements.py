"""Financial statements in running text read as records (stages/core/tree/tables/statements.py): each row
sentence carries the statement's title, the line item and its periods."""
from __future__ import annotations

from stages.core.extract.records import Line
from stages.core.tree.tables import find_tables, table_row_sentences
from stages.core.tree.tables.rows import STATEMENT_TITLE

PROSE = "The following discussion should be read together with the consolidated financial statements."


def page(*texts: str, first: int = 0, pno: int = 7) -> list[Line]:
    return [Line(t, pno, first + i) for i, t in enumerate(texts)]


def rows_of(out: list[Line]) -> list[str]:
    tables = [ln for ln in out if ln.kind == "table"]
    assert len(tables) == 1
    return table_row_sentences(tables[0].text)


def test_a_statement_title_heads_its_rows_and_the_year_header_names_the_columns():
    src = page("Acme Company and Subsidiaries", "Consolidated Statement of Cash Flow s", "Years ended December 31",
               "(Millions) 2018 2017 2016", "Cash Flows from Investing Activities",
               "Purchases of property, plant and equipment (PP&E) (1,577)  (1,373)  (1,420) ",
               "Adjustments to reconcile net income to net cash", "provided by operating activities",
               "Net income $ 5,363  $ 4,869  $ 5,058 ", PROSE)
    out = find_tables(src)
    assert [ln.text for ln in out if ln.kind == "text"] == ["Acme Company and Subsidiaries", PROSE]
    rows = rows_of(out)
    title = "Consolidated Statement of Cash Flows (cash flow statement) Years ended December 31 (Millions)"
    assert rows == [f"{title} | Cash Flows from Investing Activities",
                    f"{title} | Purchases of property, plant and equipment (PP&E) | 2018: (1,577) | 2017: (1,373) | "
                    "2016: (1,420)",
                    f"{title} | Adjustments to reconcile net income to net cash provided by operating activities",
                    f"{title} | Net income | 2018: 5,363 | 2017: 4,869 | 2016: 5,058"]
    assert out[1].page == 7


def test_a_header_spread_over_lines_and_a_ruled_header_extraction_found():
    spread = page("CONSOLIDATED STATEMENTS OF INCOME", "(In thousands)", "Years Ended", "December 2,", "2016",
                  "November 27,", "2015", "Revenue:", "Subscription $ 4,584,833 $ 3,223,904",
                  "Total revenue 5,854,430 4,795,511", PROSE)
    assert rows_of(find_tables(spread))[1] == ("CONSOLIDATED STATEMENTS OF INCOME (income statement) (In thousands) Years Ended December 2, "
                                              "November 27, | Subscription | 2016: 4,584,833 | 2015: 3,223,904")
    ruled = "|  | Three months ended June 30, |  |\n| --- | --- | --- |\n| (in millions) | 2022 | 2021 |"
    src = [Line("Consolidated statements of income (unaudited)", 3, 0), Line(ruled, 3, 1, kind="table"),
           *page("Investment banking fees $  1,586  $  3,470 ", "Card income 1,133  1,647 ", PROSE, first=2, pno=3)]
    out = find_tables(src)
    assert len(out) == 2 and out[1].text == PROSE
    assert rows_of(out)[0] == ("Consolidated statements of income (unaudited) (income statement) Three months ended June 30, "
                               "(in millions) | Investment banking fees | 2022: 1,586 | 2021: 3,470")


def test_rows_on_the_next_page_stay_prose_and_titles_in_prose_are_no_caption():
    src = page("Consolidated Balance Sheets", "2023 2022", "Cash 10 20", "Inventories 30 40") + \
        page("Total assets 50 60", "Total liabilities 70 80", first=4, pno=8)
    out = find_tables(src)
    assert [ln.kind for ln in out] == ["table", "text", "text"]  # a node keeps one page
    for text in ("Consolidated Statements of Operations 38", "consolidated balance sheets.",
                 "Consolidated Statements of Cash Flows for each of the three years ended", "BALANCE SHEET LOCATION"):
        assert not STATEMENT_TITLE.match(text)
    for text in ("CONSOLIDATED STATEMENTS OF COMPREHENSIVE INCOME (LOSS)", "Balance Sheet (e)",
                 "Condensed Consolidated Statement of Earnings",
                 "Consolidated Balance Sheets Corning Incorporated and Subsidiary Companies"):
        assert STATEMENT_TITLE.match(text)
    # a title with fewer than two rows under it is left as it was
    lone = page("Consolidated Balance Sheets", PROSE)
    assert find_tables(lone) == lone


def test_period_labels_one_column_left_of_their_values_move_onto_them():
    """A statement that sets its currency sign in a column of its own is read with the years over the sign's
    column; each value keeps its own year. A column a few rows fill (a note reference) is no value column."""
    table = ("CONSOLIDATED BALANCE SHEETS (In thousands) December 31,\n|  | 2016 | 2015 |  |\n|---|---|---|---|\n"
             "| Current assets: |  |  |  |\n| Cash and cash equivalents |  | 452,030 | 461,329 |\n"
             "| Total current assets |  | 1,001,425 | 705,563 |\n| Goodwill |  | 57,173 | 56,699 |\n"
             "| Total assets |  | 1,211,362 | 894,772 |\n| Debt (Note | 11) | — | — |\n"
             "| Total current liabilities |  | 577,464 | 334,202 |\n")
    rows = table_row_sentences(table)
    assert rows[6].endswith("| Total current liabilities | 2016: 577,464 | 2015: 334,202")
    assert rows[5].endswith("| Debt (Note | 11) | 2016: — | 2015: —")
    aligned = "|  | 2016 | 2015 |\n|---|---|---|\n| Cash |  452,030 | 461,329 |\n| Other | 9 |  |\n"
    assert table_row_sentences(aligned) == ["Cash | 2016: 452,030 | 2015: 461,329", "Other | 2016: 9"]
    extra = "|  | 2016 |  |  |\n|---|---|---|---|\n| Cash |  | 452,030 | 461,329 |\n"
    assert table_row_sentences(extra) == ["Cash | 452,030 | 461,329"]  # one label, two value columns: as written
