"""The question's answer unit in context text: which units state a number in it, which table rows name it."""
from __future__ import annotations

import re

from stages.core.common.vocab import UNIT_SPELLINGS, unit_family_spellings
from stages.core.retrieve.units import RetrievedUnit

# a unit stating a number in the answer unit scores x(1 + this): a passage that states the asked quantity
# is more often the answer than one that only shares the question's words
UNIT_BOOST = 0.5

_NUMBER = re.compile(r"\d")


def unit_pattern(answer_unit: str | None) -> re.Pattern[str] | None:
    """A regex for the ways text spells the answer unit and every unit of its family ("GWh": Wh, kWh,
    MWh, ..., joules: a text states a quantity in whichever unit suits its size); None for is_blank / no unit."""
    unit = (answer_unit or "").strip()
    if not unit or unit.lower() in ("is_blank", "none", "nan"):
        return None
    alts = {unit} | unit_family_spellings(unit)
    for w in re.findall(r"[A-Za-z0-9/_%$]+", unit):
        alts |= set(UNIT_SPELLINGS.get(w.lower(), (w,) if len(w) > 1 and any(c.isdigit() or c.isupper() for c in w)
                                        else ()))
    alts |= {a.rstrip("s") for a in alts if len(a) > 3 and a.endswith("s")}
    long_ = sorted((re.escape(a) for a in alts if len(a) > 2), key=len, reverse=True)
    short = sorted((re.escape(a) for a in alts if len(a) <= 2), key=len, reverse=True)
    parts = [f"(?i:{'|'.join(long_)})"] if long_ else []
    parts += short  # short spellings (W, L, x, %) are case-sensitive
    return re.compile(rf"(?<![A-Za-z])(?:{'|'.join(parts)})(?![A-Za-z])")


def holds_unit(u: RetrievedUnit, pattern: re.Pattern[str]) -> bool:
    """True when the unit states a number in the answer unit: in prose the unit follows a
    number ('12.5 MWh', '40%', '$3,000'); a table row needs a number and the unit anywhere
    (it is often in the header: 'Power (W): 517.66')."""
    if u.media == "table":
        return bool(_NUMBER.search(u.text)) and bool(pattern.search(u.text))
    for m in pattern.finditer(u.text):
        before, after = u.text[max(0, m.start() - 3):m.start()], u.text[m.end():m.end() + 3]
        if _NUMBER.search(before) or (m.group(0) == "$" and _NUMBER.search(after)):
            return True
    return False
