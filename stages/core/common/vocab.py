"""The vocabulary tables: keyword normalisation for the index and the question, and the units.

Every table of spellings and units lives here, as data: edit them, not the code.
- TEXT_REWRITES, EQUIVALENT, NUMBER_WORDS, MAGNITUDES, SIZE_SUFFIXES: keyword normalisation
  (below);
- UNIT_SPELLINGS: how the context writes a number in an answer unit (retrieve's unit boost);
- UNIT_ALIASES: the unit words a model writes after a value, stripped when they are the
  question's unit (answer normalisation);
- UNIT_FACTORS, CONVERSION_CONSTANTS: the conversions a stated number may go through to
  be the answer (the reader's grounding check and computed answers).

Keyword normalisation:

Questions and documents spell the same thing differently: pounds / lbs, average /
avg, one / 1, percent / %, tonnes / t, "CO 2e" (a flattened subscript) / CO2e,
11,023 / 11023, 1.01E+11 / 101000000000, "5.6 billion" / 5600000000, A100-80GB /
A100 80 GB. keywords.tokenize runs every token, of a unit and of a query alike,
through `canonical`, so both sides meet on one form. The tables here are the whole
of it: edit them, not the code, to add an equivalence.
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

# text rewrites before tokenising (pattern, replacement), in order
TEXT_REWRITES: tuple[tuple[str, str], ...] = (
    (r"\bCO\s+2\s*e\b", "CO2e"),             # 'CO 2e', 'CO 2 e' (subscript flattened by extraction)
    (r"\bCO\s+2(?=\W|$)", "CO2"),
    (r"\bCO2\s+eq\b", "CO2e"),
    (r"\bCO2eq\b", "CO2e"),
    (r"\b(k?g|t|kt|mt|lbs?)CO2e?\b", r"\1 CO2e"),  # tCO2e, kgCO2e, lbsCO2e
    (r"(?<=\d)\s*%", " percent"),
)
_REWRITES = [(re.compile(p, re.I), r) for p, r in TEXT_REWRITES]

# surface form (lower case) -> canonical token
EQUIVALENT: dict[str, str] = {
    # mass and emissions
    "lbs": "lb", "pound": "lb", "pounds": "lb",
    "kilogram": "kg", "kilograms": "kg", "kgs": "kg",
    "tonne": "t", "tonnes": "t", "ton": "t", "tons": "t",
    "co2eq": "co2e",
    # energy and power
    "kilowatt-hour": "kwh", "kilowatt-hours": "kwh", "megawatt-hour": "mwh", "megawatt-hours": "mwh",
    "gigawatt-hour": "gwh", "gigawatt-hours": "gwh", "terawatt-hour": "twh", "terawatt-hours": "twh",
    "watt-hour": "wh", "watt-hours": "wh", "watt": "w", "watts": "w", "kilowatt": "kw", "kilowatts": "kw",
    "megawatt": "mw", "megawatts": "mw", "gigawatt": "gw", "gigawatts": "gw",
    # volume
    "liter": "l", "liters": "l", "litre": "l", "litres": "l", "milliliter": "ml", "milliliters": "ml",
    "millilitre": "ml", "millilitres": "ml", "kiloliter": "kl", "kiloliters": "kl", "gallon": "gal", "gallons": "gal",
    # time
    "hours": "hour", "hrs": "hour", "hr": "hour", "h": "hour", "yrs": "year", "yr": "year", "years": "year",
    "days": "day", "mins": "minute", "min": "minute", "minutes": "minute", "seconds": "second", "sec": "second",
    # money and ratios
    "dollar": "usd", "dollars": "usd", "$": "usd", "us$": "usd", "%": "percent", "percentage": "percent",
    "pct": "percent",
    # words and their abbreviations
    "average": "avg", "averages": "avg", "averaged": "avg", "approximately": "approx", "approximate": "approx",
    "gpus": "gpu", "tpus": "tpu", "cpus": "cpu", "parameters": "param", "parameter": "param", "params": "param",
}

NUMBER_WORDS: dict[str, str] = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
    "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "twenty": "20", "thirty": "30", "forty": "40",
    "fifty": "50", "hundred": "100", "single": "1", "double": "2", "twice": "2", "half": "0.5",
}

MAGNITUDES: dict[str, int] = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12,
                              "bn": 10**9}

# a model name glued to its size word by extraction ('Transformerbig', 'BERTbase'): split off
SIZE_SUFFIXES: tuple[str, ...] = ("base", "big", "large", "small", "medium", "tiny", "huge", "mini", "xl")

_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$", re.I)
_KEEP_S = ("ss", "us", "is", "ous", "ics")


def rewrite(text: str) -> str:
    """Apply TEXT_REWRITES ('CO 2e' -> 'CO2e', '74%' -> '74 percent')."""
    for pat, repl in _REWRITES:
        text = pat.sub(repl, text)
    return text


def number(tok: str) -> str | None:
    """Canonical spelling of a numeric token ('1.170' -> '1.17', '1.01e+11' -> '101000000000'), else None."""
    if not _NUMBER.match(tok):
        return None
    try:
        d = Decimal(tok).normalize()
    except InvalidOperation:
        return None
    return format(d, "f") if d == d.to_integral_value() or abs(d.as_tuple().exponent) < 20 else None


def scaled(value: str, magnitude: str) -> str | None:
    """'5.6', 'billion' -> '5600000000' (None when `magnitude` is not a magnitude word)."""
    m = MAGNITUDES.get(magnitude)
    if m is None:
        return None
    return number(str(Decimal(value) * m))


def canonical(tok: str) -> str:
    """One token's canonical form: equivalences, number words, number spelling, plural -s."""
    if tok in EQUIVALENT:
        return EQUIVALENT[tok]
    if tok in NUMBER_WORDS:
        return NUMBER_WORDS[tok]
    n = number(tok)
    if n is not None:
        return n
    if tok.isalpha() and len(tok) > 4:
        if tok.endswith("ies"):
            return tok[:-3] + "y"
        if tok.endswith("s") and not tok.endswith(_KEEP_S):
            return tok[:-1]
    return tok


# ------------------------------------------------------------------------------ units
# a word of an answer unit (lower case) -> how the context writes a number in it
UNIT_SPELLINGS: dict[str, tuple[str, ...]] = {
    "percent": ("%", "percent", "per cent"), "percentage": ("%", "percent"),
    "usd": ("$", "usd", "dollar", "dollars"), "multiplier": ("×", "x", "times", "fold"),
    "times": ("×", "x", "times", "fold"), "fold": ("×", "x", "times", "fold"),
    "liters": ("L", "liter", "liters", "litre", "litres"), "lbs": ("lbs", "lb", "pounds"),
    "w": ("W", "watt", "watts"), "watts": ("W", "watt", "watts"), "kw": ("kW",), "mw": ("MW",),
    "tco2e": ("tCO2e", "tCO2", "tons", "tonnes", "t CO2"), "metric": ("tons", "tonnes", "t"),
    "kg": ("kg",), "g": ("g",), "km": ("km",), "miles": ("mile", "miles"),
    "hours": ("hours", "hour", "h", "hrs"), "hour": ("hours", "hour", "h", "hrs"),
    "days": ("days", "day"), "years": ("years", "year"), "year": ("years", "year"),
    "seconds": ("seconds", "second", "s", "sec"), "gb": ("GB",), "tb": ("TB",),
}

# surface form of a unit after a value (lower case) -> the unit it means
UNIT_ALIASES: dict[str, str] = {
    "%": "percent", "pct": "percent", "percent": "percent", "per cent": "percent",
    "usd": "usd", "us$": "usd", "dollar": "usd", "dollars": "usd",
    "x": "multiplier", "×": "multiplier", "times": "multiplier", "fold": "multiplier",
    "multiplier": "multiplier", "ratio": "multiplier",
}

# unit families (substrings of an answer unit) -> the factors a value may differ from a stated number by
UNIT_FACTORS: tuple[tuple[tuple[str, ...], tuple[float, ...]], ...] = (
    (("lbs", "pound", "ton"), (2000.0, 1 / 2000.0, 2204.62, 1 / 2204.62, 0.453592, 1 / 0.453592, 907.185,
                               1 / 907.185, 1.10231, 1 / 1.10231)),
    (("kg", "gram", "tco2", "tonne", "metric ton"), (2.20462, 1 / 2.20462, 2204.62, 1 / 2204.62)),
    (("hour", "day", "week", "year", "minute", "second", "gpuh"), (24.0, 1 / 24.0, 60.0, 1 / 60.0, 3600.0, 1 / 3600.0,
                                                                    7.0, 1 / 7.0, 365.0, 1 / 365.0, 8760.0, 1 / 8760.0,
                                                                    1440.0, 1 / 1440.0)),
    (("liter", "litre", "gallon"), (3.78541, 1 / 3.78541)),
    (("mile", "km", "kilomet"), (1.60934, 1 / 1.60934)),
    (("joule", "mj", "kwh"), (3.6, 1 / 3.6, 3.6e6, 1 / 3.6e6)),
)
# constants an arithmetic explanation may use without the text stating them
CONVERSION_CONSTANTS = frozenset({
    1.0, 2.0, 10.0, 100.0, 1000.0, 1e6, 1e9, 1e12,  # magnitudes, halves, percent
    2000.0, 2204.62, 2.20462, 453.592, 0.453592, 907.185, 0.907185,  # lbs, short tons, kg
    24.0, 60.0, 3600.0, 365.0, 7.0, 12.0, 8760.0,  # time
    3.6, 1.60934, 3.78541,  # kWh/MJ, miles/km, gallons/liters
})

# ------------------------------------------------------------------------------ units a question asks for
# answer.kinds infers a question's answer unit from these when the questions file gives none
# (answer.infer_unit); answer.unit_words in params.yaml adds or overrides entries.
# a unit as a question writes it (lower case) -> the answer unit it names
QUESTION_UNIT_WORDS: dict[str, str] = {
    # energy and power
    "kwh": "kWh", "kilowatt-hours": "kWh", "kilowatt hours": "kWh", "kilowatt-hour": "kWh", "kilowatt hour": "kWh",
    "mwh": "MWh", "megawatt-hours": "MWh", "megawatt hours": "MWh", "megawatt-hour": "MWh",
    "gwh": "GWh", "gigawatt-hours": "GWh", "gigawatt hours": "GWh", "twh": "TWh", "terawatt-hours": "TWh",
    "terawatt hours": "TWh", "wh": "Wh", "watt-hours": "Wh", "watt hours": "Wh",
    "joules": "J", "j": "J", "kilojoules": "kJ", "kj": "kJ", "megajoules": "MJ", "mj": "MJ",
    "watts": "W", "w": "W", "kilowatts": "kW", "kw": "kW", "megawatts": "MW", "mw": "MW", "gigawatts": "GW",
    "gw": "GW",
    # emissions and mass
    "tco2e": "tCO2e", "tco2eq": "tCO2e", "tco2": "tCO2e", "tons of co2e": "tCO2e", "tonnes of co2e": "tCO2e",
    "metric tons of co2e": "tCO2e", "metric tons of co2": "tCO2e", "tons of co2": "tCO2e",
    "kgco2e": "kgCO2e", "kgco2eq": "kgCO2e", "kg co2e": "kgCO2e", "kilograms of co2e": "kgCO2e",
    "gco2e": "gCO2e", "gco2eq": "gCO2e", "grams of co2e": "gCO2e", "grams of co2eq": "gCO2e",
    "gco2/kwh": "gCO2/kWh", "gco2e/kwh": "gCO2/kWh", "grams of co2 per kwh": "gCO2/kWh",
    "grams of co2e per kwh": "gCO2/kWh", "grams of co2eq per kwh": "gCO2/kWh", "gco2eq/kwh": "gCO2/kWh",
    "grams per kwh": "gCO2/kWh",
    "mmt co2e": "MMT CO2e", "million metric tons of co2e": "MMT CO2e",
    "metric tons": "metric tons", "tonnes": "metric tons", "tons": "tons", "kilograms": "kg", "kg": "kg",
    "grams": "g", "pounds": "lbs", "lbs": "lbs",
    # water and volume
    "liters": "liters", "litres": "liters", "million liters": "liters", "milliliters": "mL", "ml": "mL",
    "gallons": "gallons", "cubic meters": "cubic meters", "m3": "cubic meters", "l/kwh": "L/kWh",
    # time
    "years": "years", "months": "months", "weeks": "weeks", "days": "days", "hours": "hours", "minutes": "minutes",
    "seconds": "seconds", "milliseconds": "milliseconds", "ms": "milliseconds", "microseconds": "microseconds",
    "gpu hours": "GPU hours", "gpu-hours": "GPU hours",
    # data and throughput
    "gb": "GB", "gigabytes": "GB", "tb": "TB", "terabytes": "TB", "mb": "MB", "megabytes": "MB", "gb/s": "GB/s",
    "gbps": "Gbps", "tokens": "tokens", "parameters": "parameters", "flops": "FLOPs",
    # distance
    "km": "km", "kilometers": "km", "kilometres": "km", "miles": "miles", "meters": "meters",
    "cm": "cm", "centimeters": "cm", "mm": "mm", "millimeters": "mm", "inches": "inches",
    "pt": "pt", "points": "pt", "em": "em", "ems": "em", "pixels": "pixels", "px": "pixels",
    # money
    "usd": "USD", "us dollars": "USD", "u.s. dollars": "USD", "dollars": "USD", "$": "USD",
    "million usd": "million USD", "millions of usd": "million USD", "million dollars": "million USD",
    "millions of dollars": "million USD", "$ million": "million USD", "$ millions": "million USD",
    "billion usd": "billion USD", "billions of usd": "billion USD", "billion dollars": "billion USD",
    "billions of dollars": "billion USD", "$ billion": "billion USD", "thousands of dollars": "thousand USD",
    "usd per hour": "USD/h", "usd/h": "USD/h", "usd/hr": "USD/h", "dollars per hour": "USD/h",
    "per share": "USD per share", "eur": "EUR", "euros": "EUR", "€": "EUR", "gbp": "GBP", "£": "GBP",
    # ratios
    "percent": "percent", "percentage": "percent", "%": "percent", "per cent": "percent",
    "percentage points": "percentage points", "basis points": "basis points", "bps": "basis points",
    "multiplier": "multiplier", "fraction": "fraction", "pue": "PUE",
}

# wording that asks for a ratio without naming a unit (a regex each, lower case) -> the answer unit
QUESTION_RATIO_UNITS: tuple[tuple[str, str], ...] = (
    (r"\bwhat (?:percentages?|percent|share|proportion)\b|\bby what percent(?:age)?\b|\bpercent(?:age)? change\b"
     r"|\bhow much (?:of a )?percent", "percent"),
    (r"\bhow many times\b(?! (?:was|were|did|does|do|has|have|had|is|are|will|would|can|could)\b)|\bby what (?:factor|multiple)\b|\bwhat factor\b|\b\w+-fold\b|\bspeed-?up\b"
     r"|\btimes (?:more|less|larger|smaller|higher|lower|faster|slower|greater|cheaper)\b", "multiplier"),
    (r"\bwhat fraction\b|\bas a decimal\b", "fraction"),
)

# a money unit asked per time ("hourly price", "USD per hour"): (regex, the unit it makes of USD)
QUESTION_RATE_UNITS: tuple[tuple[str, str], ...] = ((r"\bhourly\b|\bper hour\b|\ban hour\b", "USD/h"),)

# the quantity a question asks about (a word, lower case) -> its unit when the question names no unit;
# "what <...> <quantity>" also marks a question as numeric
QUANTITY_UNITS: dict[str, str] = {
    "percentage": "percent", "percent": "percent", "improvement": "percent", "reduction": "percent",
    "score": "score", "batch": "samples", "weight": "kg", "weigh": "kg", "intensity": "gCO2/kWh",
    "consumption": "kWh", "usage": "kWh", "demand": "W", "capacity": "W", "count": "count", "number": "count",
    "cost": "USD", "costs": "USD", "price": "USD", "prices": "USD", "revenue": "USD", "revenues": "USD",
    "spend": "USD", "spending": "USD", "income": "USD", "profit": "USD", "sales": "USD", "capex": "USD",
    "investment": "USD", "expenses": "USD", "earnings": "USD", "dividend": "USD", "worth": "USD",
    "margin": "percent", "rate": "percent", "share": "percent", "growth": "percent",
    "emissions": "tCO2e", "footprint": "tCO2e",
    "energy": "kWh", "electricity": "kWh", "power": "W", "water": "liters",
    "duration": "hours", "long": "hours",
}


# unit spelling -> (family, scale in the family's base unit), for restating copied numbers (answer/restate.py)
# and for the retrieval boost of a unit's family (retrieve.unit_family); matched case-sensitively, so that
# "MW" (megawatt) and "mW", "ms" and "Ms" stay apart. Bare "B" is the billion suffix, never bytes.
UNIT_SCALES: dict[str, tuple[str, float]] = {}
for _family, _table in {
    "time": {("ns", "nanosecond", "nanoseconds"): 1e-9, ("µs", "μs", "us", "microsecond", "microseconds"): 1e-6,
             ("ms", "millisecond", "milliseconds"): 1e-3, ("s", "sec", "secs", "second", "seconds"): 1.0,
             ("min", "mins", "minute", "minutes"): 60.0, ("h", "hr", "hrs", "hour", "hours"): 3600.0,
             ("day", "days"): 86400.0, ("week", "weeks"): 604800.0, ("year", "years", "yr", "yrs"): 31536000.0},
    "energy": {("Wh", "watt-hour", "watt-hours"): 1.0, ("kWh", "KWh", "kilowatt-hour", "kilowatt-hours"): 1e3,
               ("MWh", "megawatt-hour", "megawatt-hours"): 1e6, ("GWh", "gigawatt-hour", "gigawatt-hours"): 1e9,
               ("TWh", "terawatt-hour", "terawatt-hours"): 1e12,
               ("J", "joule", "joules"): 1 / 3600, ("kJ",): 1e3 / 3600, ("MJ",): 1e6 / 3600, ("GJ",): 1e9 / 3600},
    "power": {("W", "watt", "watts", "Watts"): 1.0, ("kW", "kilowatt", "kilowatts"): 1e3,
              ("MW", "megawatt", "megawatts"): 1e6, ("GW", "gigawatt", "gigawatts"): 1e9, ("TW",): 1e12},
    "mass": {("g", "gram", "grams"): 1.0, ("kg", "kilogram", "kilograms"): 1e3, ("t", "tonne", "tonnes"): 1e6,
             ("lb", "lbs", "pound", "pounds"): 453.592},
    "data": {("KB", "kB"): 1e3, ("MB",): 1e6, ("GB",): 1e9, ("TB",): 1e12, ("PB",): 1e15,
             ("Kb", "kb"): 125.0, ("Mb",): 1.25e5, ("Gb",): 1.25e8, ("Tb",): 1.25e11},
    "volume": {("mL", "ml", "milliliter", "milliliters"): 1e-3, ("L", "l", "liter", "liters", "litre", "litres"): 1.0,
               ("kL", "kiloliter", "kiloliters"): 1e3, ("gallon", "gallons"): 3.78541},
    "distance": {("km", "kilometer", "kilometers", "kilometre", "kilometres"): 1.0, ("mile", "miles"): 1.60934},
}.items():
    for _spellings, _scale in _table.items():
        for _s in _spellings:
            UNIT_SCALES[_s] = (_family, _scale)


# "tCO2e", "kg CO2eq", "lbs CO2e", "seconds", "GPU hours": the answer unit's leading word (after "GPU")
_ANSWER_UNIT = re.compile(r"^\s*(?:GPU[\s-]?)?([A-Za-zµμ]+?)(?:\s?CO\s?2.*)?\s*$")


def answer_unit_scale(unit: str | None) -> tuple[str, float] | None:
    """(family, scale) of an answer unit such as "seconds", "MWh" or "tCO2e"; None for compound
    ("USD per hour", "L/kWh") or unknown units."""
    if not unit or "/" in unit or " per " in unit:
        return None
    m = _ANSWER_UNIT.match(unit)
    return UNIT_SCALES.get(m.group(1)) if m else None


def unit_family_spellings(answer_unit: str | None) -> set[str]:
    """Every spelling (two letters or more) of the units in the family of an answer unit ("GWh": Wh, kWh,
    MWh, ..., joules; "days": seconds ... years), or an empty set for a unit of no known family."""
    fam = answer_unit_scale(answer_unit)
    return {s for s, (f, _) in UNIT_SCALES.items() if f == fam[0] and len(s) > 1} if fam else set()
