"""Tokenisation and the BM25 keyword index (scores equal rank-bm25's, fast path)."""
from __future__ import annotations

import numpy as np
from rank_bm25 import BM25Okapi

from stages.core.keywords import KeywordIndex, tokenize


def test_tokenize_drops_stop_words_and_thousands_separators_and_splits_hyphens():
    assert tokenize("Training GShard-600B used 1,287 MWh, e.g. the GPT-3 model.") == [
        "training", "gshard-600b", "gshard", "600b", "used", "1287", "mwh", "gpt-3", "gpt", "3", "model"]


def test_tokenize_splits_tokens_glued_by_pdf_extraction():
    assert tokenize("BERTbase V100x64") == ["bertbase", "bert", "base", "v100x64", "v100", "x64"]
    # ordinary words and acronyms are left alone
    assert tokenize("GPUs Transformer A100 CO2") == ["gpus", "transformer", "a100", "co2"]


def test_scores_match_rank_bm25_on_a_normal_corpus():
    docs = [tokenize(t) for t in [
        "The A100 GPU draws 400 W at peak.", "Solar farms generate MWh of electricity.",
        "Water use of data centers in liters.", "GPU power and energy per token.",
        "Carbon emissions of training BERT.", "Data centers report PUE yearly."]]
    ours = KeywordIndex(docs)
    ref = BM25Okapi(docs)
    q = tokenize("GPU power draw in W, GPU")
    assert np.allclose(ours.scores(q), ref.get_scores(q))
    assert [i for i, _ in ours.search(q, 2)] == [3, 0]  # "gpu" twice + "power" in a shorter unit beats "gpu" + "w"


def test_tiny_and_empty_corpora_do_not_break():
    two = KeywordIndex([tokenize("a cat sat"), tokenize("the dog ran")])
    hits = two.search(tokenize("dog"), 5)
    assert [i for i, _ in hits] == [1] and hits[0][1] > 0
    assert KeywordIndex([]).search(["x"], 3) == []
    assert two.search([], 3) == []
