"""table_cells: the model's row, the cell the question's column words name."""
from stages.core.answer.record import ContextBlock
from stages.core.answer.table_cells import Cell, pick_cell, records
from stages.core.answer.typed_reader import read_reply

ROW = ("Table 4: Energy consumption (mean ± std dev) per model across three prompt sizes (Wh). | Model: LLaMA-3.1-70B | "
       "Energy Consumption(100 input-300 output)(Wh): 1.271 ± 0.020 | Energy Consumption(1k input-1k output)(Wh): "
       "4.525 ± 0.053 | Energy Consumption(10k input-1.5k output)(Wh): 19.183 ± 0.560 Table 4: Energy consumption "
       "(mean ± std dev) per model across three prompt sizes (Wh). | Model: LLaMA-3.1-405B | Energy Consumption(100 "
       "input-300 output)(Wh): 2.226 ± 0.142 | Energy Consumption(1k input-1k output)(Wh): 9.042 ± 0.385")
Q_10K = ("According to Jegham et al. (2025), what is the mean energy consumption of LLaMA-3.1-70B for a prompt of "
         "10k input and 1.5k output tokens, in Wh?")


def test_records_split_at_cells_without_a_number_and_at_line_breaks():
    recs = records(ROW)
    assert [[c.value for c in r] for r in recs] == [[1.271, 4.525, 19.183], [2.226, 9.042]]
    assert recs[0][2] == Cell("Energy Consumption(10k input-1.5k output)(Wh)", 19.183)
    lines = records("Iowa: PUE = 1.1; WUE = 0.14\nTexas: PUE = 1.28; WUE = 0.25")
    assert lines == [[Cell("PUE", 1.1), Cell("WUE", 0.14)], [Cell("PUE", 1.28), Cell("WUE", 0.25)]]


def test_the_cell_whose_column_the_question_names_replaces_the_copied_one():
    """The 1.5B copies the first number of the record (dev d955; d605 took the last one)."""
    assert pick_cell(Q_10K, 1.271, [ROW]) == 19.183
    assert pick_cell(Q_10K.replace("10k input and 1.5k output", "1k input and 1k output"), 19.183, [ROW]) == 4.525


def test_the_copied_cell_stays_when_no_other_column_is_named_better():
    assert pick_cell(Q_10K, 19.183, [ROW]) == 19.183  # already the named column
    assert pick_cell("What is the mean energy of LLaMA-3.1-70B, in Wh?", 4.525, [ROW]) == 4.525  # no column named
    assert pick_cell(Q_10K, 7.0, [ROW]) == 7.0  # not a cell of any record
    # a tie between two other columns: nothing replaces the copied number
    tie = "Site: A | Energy (2019): 1 | Energy (2020): 2 | Energy (2021): 3"
    assert pick_cell("Energy in 2020 or 2021?", 1.0, [tie]) == 1.0


def test_read_reply_picks_the_cell_only_in_table_units():
    units = [ContextBlock("jegham2025", ROW, "table")]
    data = {"units": [1], "value": 1.271}
    assert read_reply("numeric", "Wh", data, units, question=Q_10K).value == "19.183"
    prose = [ContextBlock("jegham2025", ROW)]  # the same words in a prose unit: not a table record
    assert read_reply("numeric", "Wh", data, prose, question=Q_10K).value == "1.271"


def test_operands_from_two_records_take_b_from_a_s_record_under_b_s_column():
    # xia2024 Table IV in the typed reader's view (dev d816): one record per measure, one cell per GPU.
    # Asked "how many dollars cheaper is fine-tuning on an H100 than on an A40?", the reader took a = 17.9
    # from the "Cost ($)" record and b = 0.79 from "Cost ($/hr)": b is a's record's A40 cell, 32.7
    table = ("TABLE IV: ESTIMATED COST OF FINE-TUNING MIXTRAL\nCost ($/hr): A40 48GB = 0.79; A100 80GB = 1.67; "
             "H100 80GB = 2.1\nCost ($): A40 48GB = 32.7; A100 80GB = 25.4; H100 80GB = 17.9")
    from stages.core.answer.table_cells import same_record_operand

    assert same_record_operand(17.9, 0.79, [table]) == 32.7
    assert same_record_operand(17.9, 32.7, [table]) is None  # one record already
    assert same_record_operand(2.1, 17.9, [table]) is None  # one column (H100), two measures: as asked
    assert same_record_operand(17.9, 5.0, [table]) is None  # b in no record
    units = [ContextBlock("xia2024", table, "table")]
    q = ("Based on Table IV of Xia et al. (2024), how many dollars cheaper is fine-tuning sparse Mixtral on an H100 "
         "than on an A40?")
    data = {"units": [1], "operation": "difference", "a": 17.9, "b": 0.79}
    assert read_reply("numeric", "USD", data, units, question=q).value == "14.8"
