"""A name answer cut to the name: the words the question already says go.

Asked "Which dataset did the Mélange evaluation use ...", the 1.5B reader answers "Chatbot Arena
dataset"; asked "Which Finnish project ...", "Finnish ETAIROS (Ethical AI for the Governance of the
Society)". A grader comparing names takes neither for "Chatbot Arena" or "ETAIROS".
The words of the question's "Which ..." phrase (the kind of thing asked for: "dataset", "Finnish
project") are dropped from the ends of the answer, and so is a bracketed expansion after it.
"""
from __future__ import annotations

import re

# "Which <phrase> <verb>": the phrase names the kind of thing asked for
_WHICH = re.compile(
    r"\b(?:which|what)\s+(?P<phrase>(?:[\w'’.-]+\s+){0,4}?[\w'’.-]+?)(?:,|\s+(?:did|does|do|was|were|is|are|has|have|"
    r"had|can|could|would|will|should|achieved|achieves|used|uses|use|of|in|on|for|from|that|to|by|with)\b)",
    re.IGNORECASE)
_VERBS = frozenset({"is", "are", "was", "were", "did", "does", "do", "has", "have", "had"})
_EXPANSION = re.compile(r"\s*\([^()]{12,}\)\s*$")  # "ETAIROS (Ethical AI for the Governance of the Society)"


def asked_kind_words(question: str) -> set[str]:
    """Lower-case words of the question's "Which <phrase>" (empty when it asks otherwise)."""
    m = _WHICH.search(question)
    if not m:
        return set()
    words = [w.lower().strip("'’.") for w in m.group("phrase").split()]
    if words[0] in _VERBS:  # "What is the name of ...": no kind named
        return set()
    return set(words) - {"the", "a", "an"}


def tidy_name(answer: str, question: str) -> str:
    """``answer`` without a trailing bracketed expansion and without the question's "Which" words at
    its ends; unchanged when nothing would be left."""
    name = _EXPANSION.sub("", answer).strip() or answer
    words = name.split()
    drop = asked_kind_words(question)
    while len(words) > 1 and words[0].lower().strip(",.") in drop:
        words = words[1:]
    while len(words) > 1 and words[-1].lower().strip(",.") in drop:
        words = words[:-1]
    return " ".join(words)
