"""Tokenisation and the BM25 keyword index (scores equal rank-bm25's, fast path)."""
from __future__ import annotations

import numpy as np
from rank_bm25 import BM25Okapi

from stages.core.index.keywords import KeywordIndex, tokenize, words
from stages.core.common.vocab import canonical, number, scaled


def test_words_drop_stop_words_and_thousands_separators_and_split_hyphens():
    assert words("Training GShard-600B used 1,287 MWh, e.g. the GPT-3 model.") == [
        "training", "gshard-600b", "gshard", "600b", "used", "1287", "mwh", "gpt-3", "gpt", "3", "model"]


def test_an_elision_mark_is_not_part_of_a_word():
    # labels quote with "…" glued to the next or previous word; it must not hide the word
    assert words("…measured efficiency datacenter… (p.3)") == ["measured", "efficiency", "datacenter", "p.3"]
    assert tokenize("…datacenter") == tokenize("datacenter")


def test_tokenize_splits_tokens_glued_by_pdf_extraction():
    assert tokenize("BERTbase V100x64") == ["bertbase", "bert", "base", "v100x64", "v100", "x64", "64"]
    assert tokenize("Transformerbig P100x8") == ["transformerbig", "transformer", "big", "p100x8", "p100", "x8", "8"]
    # ordinary words and acronyms are left alone (but for the plural)
    assert tokenize("GPUs Transformer A100 CO2") == ["gpu", "transformer", "a100", "co2"]


def test_question_and_table_row_meet_on_one_vocabulary():
    q = set(tokenize("How many pounds of CO2e for an average human life in one year?"))
    row = set(tokenize("Consumption: Human life, avg, 1 year | CO 2e (lbs): 11,023"))
    assert {"lb", "co2e", "avg", "human", "life", "1", "year"} <= q & row
    assert set(tokenize("eight A100 80 GB GPUs")) <= set(tokenize("8x A100-80GB GPU")) | {"8"}
    assert "percent" in tokenize("74%") and "percent" in tokenize("74 percent")
    assert {"552", "t", "co2e"} <= set(tokenize("552 tCO2e")) & set(tokenize("552 tonnes of CO2e"))


def test_numbers_have_one_spelling():
    assert number("1.170") == "1.17" and number("1.01e+11") == "101000000000" and number("11023") == "11023"
    assert number("v100") is None
    assert scaled("5.6", "billion") == "5600000000" and scaled("5.6", "apples") is None
    assert "5600000000" in tokenize("about 5.6 billion liters") and "5600000000" in tokenize("5,600,000,000 L")
    assert "5439000" in tokenize("5.439 million liters") and "5439000" in tokenize("5,439,000 liters")
    assert canonical("kilowatt-hours") == "kwh" and canonical("eight") == "8" and canonical("centers") == "center"
    assert canonical("process") == "process" and canonical("efficiencies") == "efficiency"


def test_scores_match_rank_bm25_on_a_normal_corpus():
    docs = [words(t) for t in [
        "The A100 GPU draws 400 W at peak.", "Solar farms generate MWh of electricity.",
        "Water use of data centers in liters.", "GPU power and energy per token.",
        "Carbon emissions of training BERT.", "Data centers report PUE yearly."]]
    ours = KeywordIndex(docs)
    ref = BM25Okapi(docs)
    q = words("GPU power draw in W, GPU")
    assert np.allclose(ours.scores(q), ref.get_scores(q))
    assert [i for i, _ in ours.search(q, 2)] == [3, 0]  # "gpu" twice + "power" in a shorter unit beats "gpu" + "w"


def test_tiny_and_empty_corpora_do_not_break():
    two = KeywordIndex([tokenize("a cat sat"), tokenize("the dog ran")])
    hits = two.search(tokenize("dog"), 5)
    assert [i for i, _ in hits] == [1] and hits[0][1] > 0
    assert KeywordIndex([]).search(["x"], 3) == []
    assert two.search([], 3) == []
