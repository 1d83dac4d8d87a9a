"""ref_id: the document the question names, when the context holds it.

"According to Strubell et al. (2019) ...", "Which dataset did Fernandez et al. (2025) use ...":
the model sometimes points at another paper's unit that states the same thing, or at two papers.
When the question names exactly one document (the index's document cards, stages/core/index/cards.py:
authors, title, names) and the context holds units of it, that document is the citation. On dev and
train, every answerable question naming exactly one document has it among its gold ref ids (105 of
105, 3 of 3).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from stages.core.index.cards import CARDS, DocNamer, annual_years, read_namer

Namer = Callable[[str], Sequence[str]]  # question -> the ids of the documents it names, best first


def doc_namer(index_dir: Path, share: float = 0.75) -> Namer:
    """The namer of an index directory's `doc_cards.json` (a missing file names nothing)."""
    return _names(read_namer(index_dir / CARDS, share))


def _names(namer: DocNamer) -> Namer:
    return lambda question: [n.doc_id for n in namer.name(question)]


def answer_cards(index_dir: Path) -> tuple[Namer, dict[str, int]]:
    """What answering reads from an index directory's `doc_cards.json`, read once: the namer and the
    fiscal year of each annual report (index.cards.annual_years)."""
    namer = read_namer(index_dir / CARDS)
    return _names(namer), annual_years(namer.cards)


def cite_named(refs: list[str], question: str, context_docs: Iterable[str], names: Namer) -> list[str]:
    """[the named document] when the question names exactly one and the context holds it, else ``refs``."""
    named = list(names(question))
    if len(named) == 1 and named[0] in set(context_docs):
        return [named[0]]
    return refs
