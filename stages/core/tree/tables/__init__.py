"""Tables: found in extracted text, kept as one table node whose rows are units.

Text extraction (the WattBot JSON, a PDF page without ruled tables) leaves a table
as bare lines in the running text: a header, rows of short lines ending in numbers,
and a "Table N: ..." caption above or below them, e.g.

    Consumption CO 2e (lbs)
    Human life, avg, 1 year 11,023
    ...
    Table 1: Estimated CO 2 emissions from training com-
    mon NLP models, compared to familiar consumption.

Glued into the prose paragraph around it, a row matches nothing well. `find_tables`
takes such a region out of the line flow (the prose around it joins up again) and
puts one table line in its place, whose text is a compact markdown table with the
caption on its first line; `table_row_sentences` turns it into one sentence per row
that carries the caption and the header:

    Table 1: Estimated CO2 emissions ... | Consumption: Human life, avg, 1 year | CO 2e (lbs): 11,023

Tables PDF extraction already found (`kind == "table"`, markdown) only get the caption
next to them. The modules, in the order a table goes through them:
- `find`: the caption, and the header and row lines next to it, in the line flow;
- `rows`: which line is a row or a label, and a row's label and value cells;
- `table`: the rows fitted to the header (`read_table`), rendered as markdown;
- `columns`: the column names a header gives, by the first of its readers that fits;
- `markdown`: a table node's markdown read back into row sentences and blocks.
"""
from stages.core.tree.tables.columns import bracket_chunks, header_chunks
from stages.core.tree.tables.find import find_tables
from stages.core.tree.tables.markdown import (
    is_separator,
    markdown_cells,
    table_block,
    table_parts,
    table_row_sentences,
)
from stages.core.tree.tables.rows import bound_units, label_like, row_like, split_row, unglued
from stages.core.tree.tables.table import Table, read_table

__all__ = ["find_tables", "read_table", "Table", "table_row_sentences", "table_parts", "table_block",
           "markdown_cells", "is_separator", "row_like", "label_like", "split_row",
           "bound_units", "unglued", "header_chunks", "bracket_chunks"]
