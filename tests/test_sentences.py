"""Offline Punkt sentence splitting on technical text."""
from __future__ import annotations

import pytest

from stages.core.tree.sentences import DEFAULT_ABBREVIATIONS, SentenceSplitter


@pytest.fixture(scope="module")
def splitter() -> SentenceSplitter:
    return SentenceSplitter()


def test_abbreviations_and_numbers_do_not_split(splitter):
    text = ("As shown in Fig. 3 and Sec. 4.2, training used 1,287 MWh. Strubell et al. report approx. 626,155 lbs "
            "of CO2e, i.e. more than five cars. See e.g. Table 2. The U.S. average is 0.429 kg/kWh. "
            "We compare GPT-3 vs. Gopher (cf. Eq. 2). Figs. 4-5 and Tab. 1 in Vol. 3, pp. 12-15, No. 7 etc. agree. "
            "Costs were $4.6M in 2023.")
    assert splitter.split(text) == [
        "As shown in Fig. 3 and Sec. 4.2, training used 1,287 MWh.",
        "Strubell et al. report approx. 626,155 lbs of CO2e, i.e. more than five cars.",
        "See e.g. Table 2.",
        "The U.S. average is 0.429 kg/kWh.",
        "We compare GPT-3 vs. Gopher (cf. Eq. 2).",
        "Figs. 4-5 and Tab. 1 in Vol. 3, pp. 12-15, No. 7 etc. agree.",
        "Costs were $4.6M in 2023.",
    ]


def test_sentence_after_et_al_still_splits(splitter):
    assert splitter.split("This was shown by Strubell et al. The results hold for 3.5 days of training.") == [
        "This was shown by Strubell et al.", "The results hold for 3.5 days of training."]


def test_units_at_sentence_end_split(splitter):
    assert splitter.split("Training took 30 min. Inference took 2 ms. Eqs. 1 and 2 give 1.5 kWh.") == [
        "Training took 30 min.", "Inference took 2 ms.", "Eqs. 1 and 2 give 1.5 kWh."]


def test_spans_are_offsets_into_the_text(splitter):
    text = "  One sentence here.   Two   sentences here!  "
    spans = splitter.spans(text)
    assert [text[s:e] for s, e in spans] == ["One sentence here.", "Two   sentences here!"]
    assert splitter.split(text) == ["One sentence here.", "Two sentences here!"]


def test_extra_abbreviations_are_added():
    assert "approx" in DEFAULT_ABBREVIATIONS and "e.g" in DEFAULT_ABBREVIATIONS
    assert len(SentenceSplitter().split("See Thm. 2 and Suppl. 4 for proofs.")) == 2
    assert SentenceSplitter(["Suppl."]).split("See Thm. 2 and Suppl. 4 for proofs.") == [
        "See Thm. 2 and Suppl. 4 for proofs."]
