"""citing: the document a question names is the citation when the context holds it."""
import json
from pathlib import Path

import polars as pl

from stages.core.answer.citing import answer_cards, cite_named, doc_namer
from stages.core.index.cards import build_cards, write_cards


def names_of(mapping: dict[str, list[str]]):
    return lambda q: mapping.get(q, [])


def test_the_one_named_document_in_the_context_is_cited():
    """The model cited another paper stating the same thing (dev d119 cited schwartz2019, d621 luccioni2024)
    or two papers (d803) for a question naming one document."""
    names = names_of({"According to Strubell et al. (2019), X?": ["strubell2019"]})
    q = "According to Strubell et al. (2019), X?"
    assert cite_named(["schwartz2019"], q, ["schwartz2019", "strubell2019"], names) == ["strubell2019"]
    assert cite_named(["luccioni2025a", "strubell2019"], q, ["strubell2019"], names) == ["strubell2019"]


def test_refs_stay_when_the_named_document_is_not_in_the_context_or_several_are_named():
    q = "According to Strubell et al. (2019), X?"
    assert cite_named(["schwartz2019"], q, ["schwartz2019"], names_of({q: ["strubell2019"]})) == ["schwartz2019"]
    both = names_of({q: ["strubell2019", "schwartz2019"]})
    assert cite_named(["schwartz2019"], q, ["schwartz2019", "strubell2019"], both) == ["schwartz2019"]
    assert cite_named(["schwartz2019"], "Which year?", ["strubell2019"], names_of({})) == ["schwartz2019"]


def test_doc_namer_reads_the_index_cards(tmp_path: Path):
    meta = pl.DataFrame({"id": ["strubell2019", "schwartz2019"], "type": ["paper", "paper"],
                         "title": ["Energy and Policy Considerations for Deep Learning in NLP", "Green AI"],
                         "year": ["2019", "2019"],
                         "citation": ["Emma Strubell, Ananya Ganesh, Andrew McCallum. 2019. Energy and Policy ...",
                                      "Roy Schwartz, Jesse Dodge, Noah A. Smith, Oren Etzioni. 2019. Green AI."],
                         "url": ["u1", "u2"]})
    cards = build_cards(meta)
    write_cards(tmp_path / "doc_cards.json", cards, {}, 2)
    assert json.loads((tmp_path / "doc_cards.json").read_text())["cards"]
    names = doc_namer(tmp_path)
    assert names("According to Strubell et al. (2019), what was the cost?") == ["strubell2019"]
    assert doc_namer(tmp_path / "missing")("According to Strubell et al. (2019)?") == []
    names, years = answer_cards(tmp_path)  # the namer and the annual reports' years, from one read
    assert names("According to Strubell et al. (2019), what was the cost?") == ["strubell2019"] and years == {}
