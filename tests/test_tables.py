"""Table detection in extracted text (stages/core/tree/tables/), on hand-written line fixtures.

The fixtures are abridged from WattBot documents; each test's docstring names the table it comes from."""
from __future__ import annotations

from stages.core.extract.records import Line
from stages.core.tree.tables import (
    Table,
    bracket_chunks,
    bound_units,
    header_chunks,
    find_tables,
    label_like,
    row_like,
    split_row,
    unglued,
    table_row_sentences,
)
from stages.core.tree.tables.columns import grouped_sub_header


def lines(*texts: str) -> list[Line]:
    return [Line(t, 1, i) for i, t in enumerate(texts)]


PROSE_BEFORE = "hyperparameters. Whereas a decade ago most"
PROSE_AFTER = "NLP models could be trained and developed on"
STRUBELL_T1 = lines(
    PROSE_BEFORE,
    "Consumption CO 2e (lbs)",
    "Air travel, 1 passenger, NY ↔SF 1984",
    "Human life, avg, 1 year 11,023",
    "Training one model (GPU)",
    "Transformer (big) 192",
    "Table 1: Estimated CO 2 emissions from training com-",
    "mon NLP models, compared to familiar consumption. 1",
    PROSE_AFTER,
)


def test_rows_and_prose_lines():
    assert row_like("Human life, avg, 1 year 11,023")
    assert row_like("Huntsville, AL 7.11 2.1 0.70(0.54, 0.87) 33%")
    assert not row_like("3")  # a footnote mark or page number alone
    assert not row_like("of energy required to train a variety of popular")
    assert split_row("Human life, avg, 1 year 11,023") == ("Human life, avg, 1 year", ["11,023"])
    assert split_row("BERTbase V100x64 12,041.51 79 $3751–$12,571") == ("BERTbase V100x64", ["12,041.51", "79", "$3751–$12,571"])


def test_caption_below_rows_becomes_one_table_line():
    out = find_tables(STRUBELL_T1)
    assert [ln.kind for ln in out] == ["text", "table", "text"]
    assert out[0].text == PROSE_BEFORE and out[2].text == PROSE_AFTER  # the prose joins up around it
    md = out[1].text
    assert md.splitlines()[0] == ("Table 1: Estimated CO 2 emissions from training common NLP models, "
                                  "compared to familiar consumption. 1")
    rows = table_row_sentences(md)
    assert rows[1] == ("Table 1: Estimated CO 2 emissions from training common NLP models, compared to familiar "
                       "consumption. 1 | Consumption: Human life, avg, 1 year | CO 2e (lbs): 11,023")
    # a label line without numbers belongs to the row below it
    assert "Consumption: Training one model (GPU) Transformer (big) | CO 2e (lbs): 192" in rows[2]


def test_caption_above_with_multiline_header_and_aligned_columns():
    src = lines(
        "as shown below.",
        "Table 2: Percent energy sourced from each source.",
        "Consumer Renew. Gas",
        "China 22% 3%",
        "Germany 40% 7%",
        "United States 17% 35%",
        "We then compare these sources with the ones that cloud providers report for their regions.",
    )
    out = find_tables(src)
    assert [ln.kind for ln in out] == ["text", "table", "text"]
    rows = table_row_sentences(out[1].text)
    assert rows == [
        "Table 2: Percent energy sourced from each source. | Consumer: China | Renew.: 22% | Gas: 3%",
        "Table 2: Percent energy sourced from each source. | Consumer: Germany | Renew.: 40% | Gas: 7%",
        "Table 2: Percent energy sourced from each source. | Consumer: United States | Renew.: 17% | Gas: 35%",
    ]


def test_transposed_header_lines_are_zipped_per_column():
    """dodge2022 Table 6: each header line names every value column, word by word."""
    t = Table("Table 6. Gains.", ["Model BERT BERT 6B", "finetune LM Transf."], [("FS", ["1.9%", "1.7%", "0.8%"])])
    assert t.columns() == ["Model", "BERT finetune", "BERT LM", "6B Transf."]


def test_no_table_without_caption_or_rows():
    prose = lines("We trained 3 models", "for 12 hours each 8", "and report 2 results 4")
    assert find_tables(prose) == prose  # numbers without a Table caption stay prose
    cap_only = lines("Table 3: A caption with nothing around it.", PROSE_AFTER, "a commodity laptop or server, many now require")
    assert [ln.kind for ln in find_tables(cap_only)] == ["text"] * 3


def test_caption_joins_a_table_extraction_already_found():
    md = "| Model | kWh |\n|---|---|\n| BERT | 1507 |"
    src = [Line("Table 4: Energy per model.", 1, 0), Line(md, 1, 1, kind="table"), Line(PROSE_AFTER, 1, 2)]
    out = find_tables(src)
    assert [ln.kind for ln in out] == ["table", "text"]
    assert table_row_sentences(out[0].text) == ["Table 4: Energy per model. | Model: BERT | kWh: 1507"]


def test_empty_header_cells_leave_bare_values():
    assert table_row_sentences("|  |  |\n|---|---|\n| a | 1 |") == ["a | 1"]


def test_caption_with_the_word_split_and_no_colon():
    """zschache2025 Table 2: a PDF font that splits the word, "T able 2 HPC Resources", below its rows."""
    out = find_tables(lines(PROSE_BEFORE, "Cluster Capella Paula", "number of nodes 144 12",
                            "single GPU max power 700W 165W", "T able 2 HPC Resources", PROSE_AFTER))
    assert [ln.kind for ln in out] == ["text", "table", "text"]
    assert out[1].text.startswith("Table 2 HPC Resources\n")
    # prose that starts a line with "Table 1 shows" is no caption
    out = find_tables(lines(PROSE_BEFORE, "Table 1 shows the energy per model", "BERT 12 13", "GPT 14 15", PROSE_AFTER))
    assert all(ln.kind == "text" for ln in out)


def test_a_caption_between_two_tables_follows_the_documents_habit():
    """zschache2025's appendix, griggs2024's: every caption of the document sits below its rows; "Table 2" has
    rows on both sides, more below, and takes those above it, leaving the rows below to "Table 3"."""
    out = find_tables(lines(
        PROSE_BEFORE,
        "Model Hours", "BERT 12", "GPT 14", "Table 1: First.",
        "Model Watts", "BERT 250", "GPT 300", "Table 2: Second.",
        "Model Days", "BERT 3", "GPT 4", "T5 5", "Table 3: Third.",
        PROSE_AFTER))
    tables = {ln.text.splitlines()[0]: ln.text for ln in out if ln.kind == "table"}
    assert set(tables) == {"Table 1: First.", "Table 2: Second.", "Table 3: Third."}
    assert "| BERT | 250 |" in tables["Table 2: Second."]
    assert "| BERT | 3 |" in tables["Table 3: Third."]


STRUBELL_T3_HEADER = "Model Hardware Power (W) Hours kWh ·PUE CO 2e Cloud compute cost"
STRUBELL_T3_ROWS = [("Transformerbase P100x8", ["1415.78", "12", "27", "26", "$41–$140"]),
                    ("BERTbase V100x64", ["12,041.51", "79", "1507", "1438", "$3751–$12,571"])]


def test_header_chunks_keep_units_subscripts_and_lower_case_words_with_their_name():
    assert header_chunks(STRUBELL_T3_HEADER) == [
        "Model", "Hardware", "Power (W)", "Hours", "kWh ·PUE", "CO 2e", "Cloud compute cost"]
    assert header_chunks("Water for Training(million L)") == ["Water for", "Training (million L)"]


def test_glued_header_names_each_value_column_when_the_row_labels_line_up():
    """strubell2019 Table 3: one name per row-label word ("Model", "Hardware"), then one per value column."""
    t = Table("Table 3: cost", [STRUBELL_T3_HEADER], list(STRUBELL_T3_ROWS))
    assert t.columns() == ["Model / Hardware", "Power (W)", "Hours", "kWh ·PUE", "CO 2e", "Cloud compute cost"]
    assert t.cells()[1] == ["BERTbase V100x64", "12,041.51", "79", "1507", "1438", "$3751–$12,571"]
    assert "CO 2e: 1438" in table_row_sentences(t.markdown())[1]


def test_glued_header_is_left_whole_when_chunks_do_not_line_up():
    """li2025b Table 1 (water): 16 chunks for 10 values (a two-level header): naming them would pair wrong names
    with values."""
    header = ("Location PUE On-site WUE (L/kWh) Off-site EWIF (L/kWh) Water for Training(million L) "
              "Water for Each Request(mL) # of Requests for 500ml Water On-site Water")
    t = Table("Table 1", [header], [("Arizona", ["1.180", "1.630", "4.959", "2.098", "7.531", "9.629", "6.520",
                                                 "23.406", "29.926", "16.7"])] * 2)
    assert len(t.columns()) == 2
    # a number among the row label's words is a value column in hiding: no names either
    t = Table("Table 3", ["Model Parameters L d G"], [("LLaMA-33B 64.7 GB", ["60", "6656", "1"])] * 2)
    assert t.columns() == ["Model", "Parameters L d G"]


JEGHAM_T4 = lines(
    "Model Energy Consumption(100 input-300 output)(Wh) Energy Consumption(1k input-1k output)(Wh)",
    "Energy Consumption(10k input-1.5k output)(Wh)GPT-4.1 0.871 ± 0.302 3.161 ± 0515 4.833 ± 0.650GPT-4.1 mini "
    "0.450 ± 0.081 1.545 ± 0.211 2.122 ± 0.348o3 1.177 ± 0.224 5.153 ± 2.107 12.222 ± 1.082GPT-4 1.797 ± 0.259 "
    "6.925 ± 1.553 —DeepSeek-R1 (DS)* 19.251 ± 9.449 24.596 ± 9.4 29.078 ± 9.725",
    "Table 4: Energy consumption (mean ± std dev) per model across three prompt sizes (Wh).",
    PROSE_AFTER,
)


def test_rows_glued_into_one_line_are_cut_apart_and_a_mean_with_its_deviation_is_one_cell():
    """jegham2025 Table 4: extraction glued its rows into one line ("... 4.833 ± 0.650GPT-4.1 mini ...")."""
    table = find_tables(JEGHAM_T4)[0]
    rows = table_row_sentences(table.text)
    assert len(rows) == 5
    assert rows[2].endswith("| Model: o3 | Energy Consumption(100 input-300 output)(Wh): 1.177 ± 0.224 | "
                            "Energy Consumption(1k input-1k output)(Wh): 5.153 ± 2.107 | "
                            "Energy Consumption(10k input-1.5k output)(Wh): 12.222 ± 1.082")
    assert "DeepSeek-R1 (DS)*" in rows[4] and "29.078 ± 9.725" in rows[4] and "—" in rows[3]
    # a name with a number in it, or a value with a unit suffix, is not a glue point
    assert unglued("Llama 3.1 8B 20.78 27.52 2.4x faster") == ["Llama 3.1 8B 20.78 27.52 2.4x faster"]


def test_bracket_chunks_need_every_name_to_end_in_a_bracket():
    assert bracket_chunks("Model Power(W) Energy Consumption(1k input)(Wh)") == [
        "Model", "Power(W)", "Energy Consumption(1k input)(Wh)"]
    assert bracket_chunks("Model Power (W) Hours") == []


# xia2024 Tables IV and V (IEEE): a bare "TABLE IV" line, the title in capitals below it, then the table
XIA_T4 = lines(
    "can be achieved using a handful of GPUs in a relatively short",
    "TABLE IV",
    "ESTIMATED COST OF FINE -TUNING MIXTRAL ON GS WITH SPARSE MOE",
    "BASED ON OUR ANALYTICAL MODEL",
    "GPU Mem MBS Throughput Cost ($/hr) Cost ($)",
    "A40 48GB 4 1.01 0.79 32.7",
    "A100 80GB 17 2.74 1.67 25.4",
    "H100 80GB 17 4.90 2.1 17.9",
    "TABLE V",
    "BASELINE MODELS AND INFERENCE HYPERPARAMETERS",
    "Model Batch Max Temp. Top-p Top-k Beam",
    "Name Size Tokens Size",
    "Qwen2-7B 8 512 0.8 0.85 40 4",
    "Mistral-7B 16 256 0.9 0.95 30 2",
    "The models used are as follows: we describe each of them in turn below.",
)


def test_ieee_caption_is_the_title_lines_under_a_bare_table_line():
    """xia2024 Tables IV and V (khan2025 and kim2025 caption the same way)."""
    out = find_tables(XIA_T4)
    assert [ln.kind for ln in out] == ["text", "table", "table", "text"]
    t4, t5 = out[1].text.splitlines(), out[2].text.splitlines()
    # the title lines in capitals are the caption; the mixed-case line under them is the header
    assert t4[0] == ("TABLE IV: ESTIMATED COST OF FINE -TUNING MIXTRAL ON GS WITH SPARSE MOE "
                     "BASED ON OUR ANALYTICAL MODEL")
    assert t4[1] == "| GPU / Mem | MBS | Throughput | Cost ($/hr) | Cost ($) |"
    assert t4[-1] == "| H100 80GB | 17 | 4.90 | 2.1 | 17.9 |"
    # the next bare TABLE line ends the rows of the one before it
    assert t5[0] == "TABLE V: BASELINE MODELS AND INFERENCE HYPERPARAMETERS"
    assert len(t4) == 6 and len(t5) == 5  # caption, header, separator, rows


def test_ieee_first_title_line_is_caption_even_when_it_ends_in_a_number():
    """kim2025 Table III: its one title line ends in a model size."""
    src = lines("TABLE III", "Values of alpha to calculate adjusted prefill (Model: OPT 2.7B)",
                "Instance Type (GPU Model) α β avg. error rate (%)",
                "g4dn.xlarge (T4) -0.185 24.35 4.47", "g5.2xlarge (A10G) -0.074 46.97 2.60")
    out = find_tables(src)
    assert len(out) == 1 and out[0].kind == "table"
    assert out[0].text.splitlines()[0] == "TABLE III: Values of alpha to calculate adjusted prefill (Model: OPT 2.7B)"


def test_first_header_line_names_the_columns_when_the_lines_under_it_are_fewer_words():
    """xia2024 Table V: "Name Size Tokens Size" under the names; then a header of wrapped names that cannot
    be aligned."""
    t = Table("TABLE V", header=["Model Batch Max Temp. Top-p Top-k Beam", "Name Size Tokens Size"],
              rows=[("Qwen2-7B", ["8", "512", "0.8", "0.85", "40", "4"]),
                    ("Mistral-7B", ["16", "256", "0.9", "0.95", "30", "2"])])
    assert t.columns() == ["Model", "Batch", "Max", "Temp.", "Top-p", "Top-k", "Beam"]
    # more words under the first line than columns: they may be the real names, so no columns are named
    t.header = ["seq2seq models decoder-only", "model name", "number of", "parameters"]
    t.rows = [("Flan-T5-base", ["222M", "3.67"]), ("Flan-T5-large", ["750M", "7.68"])]
    assert len(t.columns()) == 2


# morrison2025 Table 2 (abridged): the caption's footnotes and a page number sit between it and the table
MORRISON_T2 = lines(
    PROSE_BEFORE,
    "Table 2: We list the estimated power usage, carbon emissions, and water consumption from training.",
    "* One of the original OLMo 7B models was trained on LUMI, which runs entirely on hydroelectric power. See",
    "Groeneveld et al. (2024) for more information.",
    "7",
    "Power", "Usage", "(MWh)", "Water", "Consumption", "(kL)", "Equiv. to...", "(water usage,", "1 person)",
    "Llama 2 7B 81 - -",
    "OLMo 2 7B 157 202 1 yr, 9 mo",
    "OLMo 2 13B 230 892 7 yrs, 10 mo",
    "OLMo 7B 149 - -",
    PROSE_AFTER,
)


def test_a_table_after_the_captions_footnotes_is_found_past_them():
    """morrison2025 Table 2: two footnote lines and a page number sit between the caption and its table."""
    out = find_tables(MORRISON_T2)
    assert [ln.kind for ln in out].count("table") == 1
    md = next(ln.text for ln in out if ln.kind == "table")
    rows = table_row_sentences(md)
    assert md.splitlines()[0].startswith("Table 2: We list")
    assert "| OLMo 2 13B | Power Usage (MWh): 230 | Water Consumption (kL): 892 " \
           "| Equiv. to... (water usage, 1 person): 7 yrs, 10 mo" in rows[2]
    assert "| Llama 2 7B | Power Usage (MWh): 81 |" in rows[0]  # its row ends in missing values "-"
    # the footnotes and the page number stay in the prose, in their place
    texts = [ln.text for ln in out if ln.kind == "text"]
    assert texts[1].startswith("* One of the original") and texts[3] == "7"
    assert texts[-1] == PROSE_AFTER


def test_past_a_gap_only_a_table_whose_header_names_its_columns_is_taken():
    """patterson2021 Table 4 is transposed: its header lines are model names that cannot be aligned."""
    src = lines(
        "Table 4. CO 2 e for NLP models (see Appendix A) 12. V100's TDP is closer to average power.",
        "12 The peak TeraFLOPS/second is 46 for TPU v2, 123 for TPU v3, and 125 for V100.",
        "6",
        "Model", "Evolved", "Trans-", "former", "NAS", "T5 Meena Gshard", "-600B", "Switch", "Trans-", "former",
        "GPT-3",
        "Number of Chips 200 512 1024 1024 1024 10,000",
        "Training time (days) 6.8 20 30 3.1 27 14.8",
        "Energy Consumption (MWh) 7.5 85.7 232 24.1 179 1,287",
        PROSE_AFTER)
    assert [ln.kind for ln in find_tables(src)] == ["text"] * len(src)
    # the same rows right under the caption are a table, as before
    assert [ln.kind for ln in find_tables([src[0], *src[3:]])].count("table") == 1


def test_a_caption_gap_is_not_used_where_captions_sit_below_their_tables():
    # this document captions its tables below them: the rows after Table 2's prose are Table 3's
    src = lines(
        "Model Hours", "BERT 12", "GPT 14", "Table 1: First.",
        "Table 2: Second, whose rows are lost to extraction.",
        "a prose line that runs on and on about the results of the experiment and more.",
        "Model Days", "BERT 3", "GPT 4", "Table 3: Third.",
        PROSE_AFTER)
    tables = [ln.text.splitlines()[0] for ln in find_tables(src) if ln.kind == "table"]
    assert tables == ["Table 1: First.", "Table 3: Third."]


def test_dash_fillers_and_upper_case_exponents_in_rows():
    """morrison2025 Table 2's rows end in missing values, "- -"."""
    assert not row_like("Llama 2 7B 81 31 6 yrs, 1 mo - -")  # a trailing dash is a broken word by default
    assert row_like("Llama 2 7B 81 31 6 yrs, 1 mo - -", dash_fillers=True)
    assert not row_like("and the Evolved Trans-", dash_fillers=True)  # a word broken across lines still is not
    assert row_like("Total Computation (floating point operations) 2.91E+21 4.05E+22 1.12E+23")


MORRISON_T2_ROWS = lines(
    "Table 2: We list the estimated power usage and water consumption from training.",
    "Power", "Usage", "(MWh)", "Carbon", "Emissions", "(tCO2eq)", "Water", "Consumption", "(kL)",
    "Equiv. to...", "(water usage,", "1 person, U.S.)",
    "Llama 2 7B 81 31 - 12 days",
    "OLMo 700M† 8 3 10 33 days",
    "OLMo 2 13B 230 101 892 7 yrs, 10 mo",
    "Total (Ours) 913 312 1,921 17 yrs, 1 mo",
    PROSE_AFTER,
)


def test_durations_are_one_cell_only_when_asked():
    """morrison2025 Tables 1 and 2: "7 yrs, 10 mo" is one cell, read so only under a bracketed header."""
    assert split_row("OLMo 2 13B 230 892 7 yrs, 10 mo") == ("OLMo 2 13B 230 892 7 yrs, 10 mo", [])
    assert split_row("OLMo 2 13B 230 892 7 yrs, 10 mo", durations=True) == \
        ("OLMo", ["2", "13B", "230", "892", "7 yrs, 10 mo"])
    assert split_row("OLMo 700M† 8 10 33 days", durations=True) == ("OLMo", ["700M†", "8", "10", "33 days"])


def test_a_bracketed_header_sets_the_value_columns_and_numbers_in_names_go_back_to_them():
    """morrison2025 Table 2: "OLMo 2 13B 230 ..." keeps its model's numbers in its name."""
    md = next(ln.text for ln in find_tables(MORRISON_T2_ROWS) if ln.kind == "table")
    rows = table_row_sentences(md)
    assert "| OLMo 2 13B | Power Usage (MWh): 230 | Carbon Emissions (tCO2eq): 101 | Water Consumption (kL): 892 " \
           "| Equiv. to... (water usage, 1 person, U.S.): 7 yrs, 10 mo" in rows[2]
    assert "| Llama 2 7B | Power Usage (MWh): 81 |" in rows[0]


def test_bracketed_columns_leave_a_table_whose_names_would_keep_three_numbers():
    """morrison2025 Table 1: the first bracketed name glues four columns ("GPU Hours Total MWh # Runs Carbon
    Emissions (tCO2eq)"), so two names count four columns too few: fitted, row names would keep 3 numbers."""
    src = lines(
        "Table 1: We developed our models in five groups.",
        "GPU", "Hours", "Total", "MWh # Runs", "Carbon", "Emissions", "(tCO2eq)", "Water", "Consumption", "(kL)",
        "<1B 29k 19 20 6 24",
        "7B 269k 196 375 65 252",
        "Total 680k 459 813 159 843",
        PROSE_AFTER)
    md = next(ln.text for ln in find_tables(src) if ln.kind == "table").splitlines()
    assert md[1] == "| GPU | Hours Total MWh # Runs Carbon Emissions (tCO2eq) Water Consumption (kL) |"
    assert "| Total | 680k 459 813 159 843 |" in md  # its values stay values


# zschache2025 Table B2: a two-level header ("single double ratio" under each of two bracketed group names)
# and model names whose version and size numbers the row split takes for values
ZSCHACHE_B2 = lines(
    "Table B2: Comparison single vs. double node deployment, Capella system",
    "Model",
    "Duration (s)",
    "Energy consumed (Wh)",
    "single double ratio single double ratio",
    "Llama 3.1 70B 161.59 304.77 1.89 48.60 94.88 1.95",
    "Qwen 2.5 72B 164.44 308.16 1.87 48.66 95.70 1.97",
    "Jamba Mini 1.5 78.61 113.88 1.45 17.42 29.81 1.71",
    "DS Llama 70B 2543.47 6792.54 2.67 702.06 1899.86 2.71",
    PROSE_AFTER,
)


def test_version_and_size_numbers_go_back_to_the_model_name():
    """zschache2025 Table B4: "Llama 3.1 8B 4.31 0.71" is the row "Llama 3.1 8B", not "Llama" with four values."""
    src = lines(
        "Table B4: Measurements of all models on the news dataset",
        "Model Energy (Wh) Accuracy",
        "Linear BoW <0.01 0.65",
        "XGBoost Embedding 0.03 0.74",
        "Llama 3.1 8B 4.31 0.71",
        "Jamba Mini 1.5 9.34 0.78",
        "DS Llama 70B 483.73 0.83",
        PROSE_AFTER)
    rows = table_row_sentences(next(ln.text for ln in find_tables(src) if ln.kind == "table"))
    assert "| Model: Llama 3.1 8B | Energy (Wh): 4.31 | Accuracy: 0.71" in rows[2]
    assert "| Model: Jamba Mini 1.5 | Energy (Wh): 9.34 |" in rows[3]
    assert "| Model: DS Llama 70B | Energy (Wh): 483.73 |" in rows[4]
    assert "| Model: Linear BoW | Energy (Wh): <0.01 |" in rows[0]


def test_plain_counts_and_tables_of_small_decimals_keep_their_values():
    """griggs2024 Table 5's GPU counts, a table of PUEs by year, and li2025a's transposed "Params 175B 280B ..."."""
    t = Table("Table 5: Instance allocations", ["Rate Solver L4 A10G Cost Savings"],
              [("1 Mélange", ["1", "3.67", "N/A"]), ("H100-only", ["1", "7.516", "51.17%"]),
               ("8 Mélange", ["1", "2", "1", "1", "13.906", "N/A"]), ("A100-Only", ["5", "18.35", "24.22%"])])
    assert not t.name_numbers_fit()  # "1 2 1" are GPU counts, not a name's numbers
    pue = Table("Table 2: PUE", ["Site 2019 2020 2021"],
                [("A", ["1.2", "1.1", "1.1"]), ("B", ["1.5", "1.4", "1.3"]), ("C", ["1.6", "1.5", "1.5"])])
    assert not pue.name_numbers_fit()
    many = Table("Table 1", ["Model"], [("Gopher", ["2021"]), ("PaLM", ["2023"]), ("GLM", ["2023"]),
                                        ("Params", ["175B", "280B", "540B", "130B", "70B", "101B"])])
    assert not many.name_numbers_fit()  # five sizes in a row are values, not one name's


def test_a_sub_header_repeated_under_group_names_names_each_column():
    """zschache2025 Table B2: every row's name has a version or size number, so the table's width comes from
    the rows once those numbers go back to the names."""
    md = next(ln.text for ln in find_tables(ZSCHACHE_B2) if ln.kind == "table")
    rows = table_row_sentences(md)
    assert "| Model: Llama 3.1 70B | Duration (s) single: 161.59 | Duration (s) double: 304.77 | " \
           "Duration (s) ratio: 1.89 | Energy consumed (Wh) single: 48.60 | Energy consumed (Wh) double: 94.88 | " \
           "Energy consumed (Wh) ratio: 1.95" in rows[0]
    assert "| Model: DS Llama 70B | Duration (s) single: 2543.47 |" in rows[3]
    assert "| Model: Jamba Mini 1.5 | Duration (s) single: 78.61 |" in rows[2]


def test_a_repeated_sub_header_without_one_group_name_per_repeat_is_not_used():
    t = Table("Table 3", ["Model Duration (s) single double single double"],
              [("A", ["1", "2", "3", "4"]), ("B", ["5", "6", "7", "8"])])
    assert grouped_sub_header(t, 4) is None  # one bracketed group name for two repeats
    t.header = ["Model Duration (s) Energy (Wh) single double single double"]
    assert grouped_sub_header(t, 4) == ["Model", "Duration (s) single", "Duration (s) double",
                                        "Energy (Wh) single", "Energy (Wh) double"]
    assert grouped_sub_header(t, 6) is None  # the repeats cover 4 columns, not 6


# khan2025 Table III: the same five models before and after optimization, each group under its label lines
KHAN_T3 = lines(
    "TABLE III: Comparison of performance metrics and carbon emissions before and after optimization",
    "Model Name Precision Recall F1 Accuracy CO2",
    "(kg)",
    "Llama 3.2 0.55 0.45 0.44 0.45 0.012",
    "Qwen 0.77 0.79 0.76 0.79 0.009",
    "After",
    "Optimization",
    "Llama 3.2 0.57 0.48 0.47 0.48 0.005",
    "Qwen 0.80 0.81 0.80 0.81 0.004",
    PROSE_AFTER,
)


def test_label_lines_between_rows_name_a_group_when_row_names_repeat():
    """khan2025 Table III: which Qwen is which? The label lines name the rows after them."""
    md = next(ln.text for ln in find_tables(KHAN_T3) if ln.kind == "table")
    assert "| Llama 3.2 (After Optimization) | 0.57" in md
    assert "| Qwen (After Optimization) | 0.80 0.81 0.80 0.81 0.004 |" in md
    assert "| Qwen | 0.77" in md  # the rows above the first label lines keep their names


def test_label_lines_without_repeated_names_begin_the_next_row_name():
    """strubell2019 Table 1: "Training one model (GPU)" above rows that name nothing seen before."""
    md = next(ln.text for ln in find_tables(STRUBELL_T1) if ln.kind == "table")
    assert "| Training one model (GPU) Transformer (big) | 192 |" in md
    src = lines(
        "Table 2: Rows whose own names are empty",
        "Method Cost",
        "Owned 3.0 0.47",
        "1.2 0.4",
        "Amortized hardware",
        "2.5 0.40",
        "1.1 0.3",
        PROSE_AFTER)
    md = next(ln.text for ln in find_tables(src) if ln.kind == "table")
    assert "| Amortized hardware | 2.5 | 0.40 |" in md  # an empty name repeats no name
    assert "(Amortized hardware)" not in md


def test_rows_under_a_long_run_of_short_lines_keep_the_line_right_above_as_header():
    """zschache2025 Table B1 (captioned below): its header sits under 25 letter-spaced prompt lines."""
    src = lines(
        PROSE_BEFORE,
        *[f"c o n t e n t {chr(97 + i)}" for i in range(26)],
        "Model GPUs Energy (Wh) Accuracy",
        "Linear BoW 1 <0.01 0.43",
        "Llama 3.1 8B 1 5.86 0.35",
        "DS Llama 70B 2 702.06 0.46",
        "Table B1: Measurements of all models on the FKTG dataset",
        PROSE_AFTER)
    out = find_tables(src)
    md = next(ln.text for ln in out if ln.kind == "table")
    assert md.splitlines()[1] == "| Model | GPUs | Energy (Wh) | Accuracy |"
    assert sum(ln.kind == "table" for ln in out) == 1
    assert any(ln.text == "c o n t e n t z" for ln in out)  # prose stays


def test_a_header_of_many_one_word_lines_heads_its_rows():
    """li2025b's water table: a header of 22 one-word lines; more than MAX_HEADER_LINES short lines and no row
    are not a table."""
    def src(n: int) -> list[Line]:
        return lines(PROSE_BEFORE, "Table 1: Water footprint of training.", *[f"Name{i}" for i in range(n)],
                     "Model 1 2 3", "Other 4 5 6", PROSE_AFTER)
    md = next(ln.text for ln in find_tables(src(22)) if ln.kind == "table").splitlines()
    assert md[1].startswith("| Name0 | Name1 Name2 ") and md[-1] == "| Other | 4 5 6 |"
    assert [ln.kind for ln in find_tables(src(25))] == ["text"] * len(src(25))


def test_unnamed_rows_are_named_by_their_first_value_when_the_header_then_names_each_column():
    """han2024 Table 5: a year starts each row of numbers; the title line above "NOx SO2 PM2.5 VOC" spans them.
    Refused: samsi2024 Table III's output lengths, whose header names no columns."""
    src = lines(
        PROSE_BEFORE,
        "Table 5:U.S. electricity generation baseline emissions from 2016 to 2028",
        "Year Electricity Generation Emission(Metric Ton)",
        "NOx SO2 PM2.5 VOC",
        "2016 1100575.41 1369417.44 111604.62 30250.76",
        "2023 711746.94 717409.25 110878.22 34311.54",
        PROSE_AFTER)
    md = next(ln.text for ln in find_tables(src) if ln.kind == "table").splitlines()
    assert md[1].startswith("| Year | Electricity Generation Emission(Metric Ton) NOx | ")
    assert md[1].endswith(" Electricity Generation Emission(Metric Ton) VOC |")
    assert md[3] == "| 2016 | 1100575.41 | 1369417.44 | 111604.62 | 30250.76 |"
    # refused: repeated first values are no keys, and a header that cannot name the columns keeps the rows whole
    same = lines(PROSE_BEFORE, "Table 2: Runs.", "Year Energy Water", "2016 1.5 2.5 3.5", "2016 1.6 2.6 3.6",
                 PROSE_AFTER)
    assert "| 2016 |" not in next(ln.text for ln in find_tables(same) if ln.kind == "table")
    wide = lines(PROSE_BEFORE, "Table 3: Runs.", "Output Time Energy Token Rate", "256 6.23 15.33 -21.82",
                 "512 6.51 21.70 -23.95", PROSE_AFTER)
    md = next(ln.text for ln in find_tables(wide) if ln.kind == "table").splitlines()
    assert md[3] == "|  | 256 | 6.23 | 15.33 | -21.82 |"  # an output length is no row name here


def test_pieces_of_one_value_split_by_spaces_are_one_cell_again():
    """strubell2019 Table 3: "$3,201,722" came out as "$3,20 1,722", so the NAS row had one value too many
    and its five values fell into one cell under "Power (W)". The bracketed cells are han2024's (Altoona) and
    li2025a's (Health), the power of ten luccioni2024 Table 5's."""
    src = lines(
        PROSE_BEFORE,
        "Model Hardware Power (W) Hours kWh ·PUE CO 2e Cloud compute cost",
        "ELMo P100x3 517.66 336 275 262 $433–$1472",
        "BERTbase V100x64 12,041.51 79 1507 1438 $3751–$12,571",
        "NAS P100x8 1515.43 274,120 656,347 626,155 $942,973–$3,20 1,722",
        "Table 3: Estimated cost of training a model in terms of CO 2 emissions (lbs).",
        PROSE_AFTER)
    md = next(ln.text for ln in find_tables(src) if ln.kind == "table")
    assert "| NAS P100x8 | 1515.43 | 274,120 | 656,347 | 626,155 | $942,973–$3,201,722 |" in md.splitlines()
    # a bracketed companion (interval, equivalent, change, deviation) and a power of ten stay with their number
    assert split_row("Altoona, IA 6.91 2.1 2.51(1.84, 3.17) 122% 1.52 (34000) 11.78") == \
        ("Altoona, IA", ["6.91", "2.1", "2.51(1.84, 3.17)", "122%", "1.52 (34000)", "11.78"])
    assert split_row("Inference energy (kWh) 1.0 × 10−4 7.3 × 10−5") == \
        ("Inference energy (kWh)", ["1.0 × 10−4", "7.3 × 10−5"])
    assert split_row("Health (Million$) 393.23 416.29 (5.86%) 383.32 (-2.52%)")[1] == \
        ["393.23", "416.29 (5.86%)", "383.32 (-2.52%)"]
    # refused: whole thousands ("1,722" after "626,155"), a bracket after a filler, a product that is no power of ten
    assert split_row("NAS 626,155 1,722 — (12) 3 × 4")[1] == ["626,155", "1,722", "—", "(12)", "3", "×", "4"]


def test_a_header_naming_only_the_value_columns_names_them_and_a_cited_sentence_is_prose():
    """cottier2024 Table 3 (captioned below): the sentence above its header ends in citations, "[21, 22, 23, 24]."."""
    src = lines(
        "high-end estimates, we found the specifications and prices of the most similar non-Google ML GPUs, and",
        "ML GPUs, listed in Table 4 [21, 22, 23, 24].",
        "H100 TPU v1 TPU v2 TPU v3 TPU v4",
        "Date adjustment factor 1.00 10.66 5.38 3.90 1.48",
        "Chip manufacturing cost (estimate) $5,346 $2,650 $2,619 $2,591 $2,203",
        "Geometric mean - $5,463 $5,054 $5,276 $5,176",
        "Table 3: Cost and performance comparison between Google TPUs and the NVIDIA H100.",
        PROSE_AFTER)
    assert not row_like("ML GPUs, listed in Table 4 [21, 22, 23, 24].")
    md = next(ln.text for ln in find_tables(src) if ln.kind == "table").splitlines()
    assert "[21, 22" not in " ".join(md)  # the sentence stays in the prose
    assert md[1] == "|  | H100 | TPU v1 | TPU v2 | TPU v3 | TPU v4 |"
    assert md[5] == "| Geometric mean | - | $5,463 | $5,054 | $5,276 | $5,176 |"
    # refused: a chunk that is no name ("#") or is prose
    traces = lines(PROSE_BEFORE, "Table 4: Request traces used for evaluation.", "Trace # Requests lp lg",
                   "Azure-Conv 19366 1154.7 211.1", "Kimi-TA 23608 8560.0 182.1", PROSE_AFTER)
    md = next(ln.text for ln in find_tables(traces) if ln.kind == "table").splitlines()
    assert md[1] == "| Trace | # Requests lp lg |"


def test_a_bracketed_header_gives_no_number_to_a_row_name_ending_in_its_unit():
    """griggs2024 Table 1: four GPU names, "L4" without a bracket; each row's four values stay values."""
    src = lines(
        PROSE_BEFORE,
        "Table 1: Specifications of four NVIDIA GPUs: L4, A10G, A100, and H100.",
        "Type L4 A10G (PCIe) A100-80G (SXM) H100 (SXM)",
        "On-demand Price ($/h) 0.7 1.01 3.67 7.5164",
        "Memory Bandwidth (GB/s) 300 600 1935 3350",
        "FP16 (TFLOPS) 242 125 312 1979",
        PROSE_AFTER)
    md = next(ln.text for ln in find_tables(src) if ln.kind == "table").splitlines()
    assert "| Memory Bandwidth (GB/s) | 300 | 600 | 1935 | 3350 |" in md
    assert not any("(GB/s) 300" in row for row in md)


def test_a_number_and_the_unit_written_after_it_are_one_value():
    """erben2023 Table 1 (caption above): each price carries its unit, so without binding them no line ended in
    a number and no row was found; the lines above the caption ("... ISSN 2150-8097.") were taken for the table
    instead. The specifications are chen2024 Table 1's."""
    src = lines(
        "Proceedings of the VLDB Endowment, Vol. 17, No. 6 ISSN 2150-8097.",
        "doi:10.14778/3648160.3648165",
        "Table 1: Average us-west cloud pricing in April ’23.",
        "Type",
        "Cloud GC A WS Azure",
        "T4 Spot 0.180 $/h 0.395 $/h 0.134 $/h",
        "T4 On-Demand 0.572 $/h 0.802 $/h 0.489 $/h",
        "Traffic (between continents)0.08 $/GB 0.02 $/GB 0.02 $/GB",
        PROSE_AFTER)
    out = find_tables(src)
    md = next(ln.text for ln in out if ln.kind == "table").splitlines()
    assert "| T4 Spot | 0.180 $/h 0.395 $/h 0.134 $/h |" in md
    assert "| Traffic (between continents) | 0.08 $/GB 0.02 $/GB 0.02 $/GB |" in md
    assert any(ln.text == "doi:10.14778/3648160.3648165" for ln in out)  # the lines above stay prose, as written
    # a header that names each column gets one value with its unit per cell
    specs = lines(PROSE_BEFORE, "Table 1: Specifications.", "Name H100 H20 TPU",
                  "Memory capacity 80 GB 96 GB 32 GB", "Memory bandwidth 3.35 TB/s 4.0 TB/s 1.64 TB/s", PROSE_AFTER)
    md = next(ln.text for ln in find_tables(specs) if ln.kind == "table").splitlines()
    assert "| Memory bandwidth | 3.35 TB/s | 4.0 TB/s | 1.64 TB/s |" in md
    # prose with one number and unit is left alone
    assert bound_units("we used 80 GB of memory") == "we used 80 GB of memory"


def test_a_sentence_ending_in_a_citation_is_prose_and_a_header_may_end_in_an_abbreviation():
    """fernandez2025 Table 3 in outline (captioned below): the footnote above its header ends in a citation,
    "(Rasley et al., 2020).", which ends in a number and so read as a row. samsi2024 Tables IV and V: a header
    ending in a capitalised abbreviation ("Util.") read as a sentence's end was lost."""
    lengths = lines(
        "we consider a peak of 309.7 TFLOPS and a",
        "300W TDP power draw; and estimate theoretical inference",
        "FLOPs with the DeepSpeed profiler (Rasley et al., 2020).",
        "Task Mean ± Std Max Output",
        "Translation 49.96 ± 39.39 550 64",
        "Summarization 838.49 ± 400.70 2386 64",
        "Table 3: Tokenized Input and Output Length Statistics",
        PROSE_AFTER)
    assert not row_like("FLOPs with the DeepSpeed profiler (Rasley et al., 2020).")
    md = next(ln.text for ln in find_tables(lengths) if ln.kind == "table").splitlines()
    assert md[1:] == ["| Task | Mean ± Std | Max | Output |", "|---|---|---|---|",
                      "| Translation | 49.96 ± 39.39 | 550 | 64 |", "| Summarization | 838.49 ± 400.70 | 2386 | 64 |"]
    # a header ending in a capitalised abbreviation ("Util.")
    util = lines(PROSE_BEFORE, "work in this area.", "Model Shards Output Length Max. Memory Util. Avg. SM Util.",
                 "4 256 23.36 95.00", "4 512 24.54 98.81", "TABLE IV: A100 Utilization: GPU utilization.", PROSE_AFTER)
    md = next(ln.text for ln in find_tables(util) if ln.kind == "table")
    assert "Max. Memory Util. Avg. SM Util." in md and "work in this area" not in md
    # a lower-case last word stays a sentence's end: "small." is prose, not a header
    assert not label_like("small.") and label_like("Avg. SM Util.")
    assert not label_like("the models are small.")


def test_a_number_and_its_magnitude_word_end_a_row_as_one_value():
    """A size written with its magnitude word ("258 bil."); a caption's own lines read the last word as written."""
    row = "Llama 3.2 1B 0.003 1.0 0.004 1.38 258 bil."
    assert row_like(row) and not row_like(row, abbreviated_ends=False)
    assert split_row(row)[1][-2:] == ["1.38", "258 bil."]
    assert split_row("8 0.036 12.64 21.5 mil.") == ("", ["8", "0.036", "12.64", "21.5 mil."])
