"""A copied number read back with the magnitude or unit the context writes next to it (restate.py).

The dev questions whose copied digits lost their magnitude word, suffix or unit: d607, d110, d409, d208, d308.
"""
from __future__ import annotations

import math

import pytest

from stages.core.answer import typed_reader as reader
from stages.core.answer.grounding import numbers_in
from stages.core.answer.record import ContextBlock
from stages.core.answer.restate import Mention, mentions, restate, unit_scale


def test_mentions_read_magnitude_words_suffixes_and_units() -> None:
    got = mentions("trained on 32 billion word-pieces at 100ms intervals; 1.3 GW, up from 445 MW; "
                   "$40M and 8B params; 552 tCO2e, 284,019 kg (626,155 lbs); Llama2-13B; 100 Gb/s")
    assert Mention(32, 32e9, "") in got
    assert Mention(100, 100, "ms") in got
    assert Mention(1.3, 1.3, "GW") in got and Mention(445, 445, "MW") in got
    assert Mention(40, 40e6, "") in got and Mention(8, 8e9, "") in got
    assert Mention(552, 552, "t") in got and Mention(284019, 284019, "kg") in got
    assert Mention(626155, 626155, "lbs") in got
    assert Mention(13, 13, "") in got  # a model's name, not 13 billion
    assert Mention(100, 100, "Gb") in got
    assert mentions("see http://x.com/a-10. 10 million cars") == [Mention(10, 1e7, "")]
    assert mentions("77,000 gigawatt-hours (GWh)") == [Mention(77000, 77000, "gigawatt-hours")]
    table = "Table 5.\n| Model | Power (W) | CO2e |\n|---|---|---|\n| ELMo | 517.66 | 262 |\n| Energy (kWh) | 12 | 3 |"
    assert mentions(table) == [Mention(5, 5, ""), Mention(517.66, 517.66, "W"),
                               Mention(262, 262, ""), Mention(12, 12, "kWh"), Mention(3, 3, "kWh")]
    assert mentions("Caption | Model: ELMo | Power (W): 517.66 | Hours: 336") == [
        Mention(517.66, 517.66, "W"), Mention(336, 336, "")]


@pytest.mark.parametrize(("unit", "expected"), [
    ("seconds", ("time", 1.0)), ("tCO2e", ("mass", 1e6)), ("kg CO2eq", ("mass", 1e3)), ("MWh", ("energy", 1e6)),
    ("lbs CO2e", ("mass", 453.592)), ("USD per hour", None), ("L/kWh", None), ("word-pieces", None), ("", None)])
def test_answer_unit_scale(unit, expected) -> None:
    assert unit_scale(unit) == expected


@pytest.mark.parametrize(("v", "pointed", "others", "unit", "expected"), [
    # the magnitude word dropped: "772 billion" copied as 772, from a unit the model did not point at
    (772, ["1 billion queries per day"], ["a total of approximately 772 billion GPT-4o queries"], "queries", 772e9),
    (10, ["no such number in 2030"], ["“10 million self-driving cars will be on the road"], "cars", 1e7),
    # zeros slipped: "32 billion" written as 32000000
    (32e6, ["XLNet outperformed BERT after training on 32 billion word-pieces"], [], "word-pieces", 32e9),
    # the decimal point dropped: "6.1 billion" written as 61000000000 (dev d207)
    (61e9, ["a large language model comprising over 6.1 billion parameters"], [], "parameters", 6.1e9),
    # ... but a bare number is never rescaled by a power of ten (no magnitude word to restore)
    (610, ["a model with 6.1 parameters"], [], "parameters", 610),
    # the unit conversion skipped: 100 ms asked in seconds, 1.3 GW asked in MW, 192 lbs asked in kg
    (100, ["a 100 Gb/s Omnipath fabric"], ["GPU usage at 100ms intervals"], "seconds", 0.1),
    (1.3, ["1.3 GW of storage capacity, up from 445 MW"], [], "MW", 1300),
    (192, ["emitted 192 lbs of CO2e"], [], "kg", 192 * 453.592 / 1000),
    # a web address states no number: its "10" does not stand for the bare 10 (dev d208)
    (10, ["Greenough, “10 million self-driving cars will be on the road by 2020,” http://www .businessinsider"
          ".com/report-10-million-selfdriving-cars-will-be-on-the-road-by-2020-2015-5-6."], [], "cars", 1e7),
    # a unit spelled out with "-hours" is energy, not the power it starts with (dev d107)
    (77000, ["expected to generate more than 77,000 gigawatt-hours (GWh) each year"], [], "TWh", 77),
    (5, ["used 5 kilowatt-hours"], [], "Wh", 5000),
    # stated as asked: unchanged
    (32, ["the cluster held 32 billion parameters"], [], "billion parameters", 32),
    (0.1, ["sampled every 100 ms"], [], "seconds", 0.1),
    (13, ["Llama2-13B-Chat was trained for 13 days"], [], "days", 13),
    (445, ["1.3 GW of storage capacity, up from 445 MW"], [], "MW", 445),
    (5, ["nothing relevant"], ["also nothing"], "tokens", 5),
    # the pointed units decide first: a bare 10 there wins over "10 million" elsewhere
    (10, ["we ran 10 experiments"], ["10 million cars"], "experiments", 10),
    # a table cell states the number without a unit, a sentence writes it with one: converted (dev d204)
    (3500, ["| Llama 4 Scout 65 Meta | 3,500 1,354 |"], ["from 0.8 MWh (OLMo 20M) to 3,500 MWh (LLaMa 4 Scout)"],
     "GWh", 3.5),
    (3500, ["no such number"], ["| Llama 4 Scout | 3,500 |", "to 3,500 MWh (LLaMa 4 Scout)"], "GWh", 3.5),
    # a table cell takes its row label's or column header's unit; a conversion by the wrong power of ten
    # is redone (dev d510: 7,571 kWh written as 0.007571 MWh)
    (0.007571, ["Table 5.\n|  | BLOOMz-7B | BLOOMz-3B |\n| Finetuning energy (kWh) | 7,571 | 3,242 |"], [],
     "MWh", 7.571),
    (7571, ["Table 5.\n|  | BLOOMz-7B | BLOOMz-3B |\n| Finetuning energy (kWh) | 7,571 | 3,242 |"], [], "MWh", 7.571),
    (517.66, ["Table 3.\n| Model | Power (W) | Hours |\n|---|---|---|\n| ELMo | 517.66 | 336 |"], [], "kW", 0.51766),
    (0.336, ["Table 3.\n| Model | Power (W) | Hours |\n| ELMo | 517.66 | 336 |"], [], "hours", 0.336),
    (517.66, ["Table 3: Power. | Model: ELMo | Power (W): 517.66 | Hours: 336"], [], "kW", 0.51766),
    (0.00145, ["it drew 145 ms per token"], [], "seconds", 0.145),
    # ... never across families, and a number written in the answer's unit stands
    (3242, ["|  | BLOOMz-7B | BLOOMz-3B |\n| Finetuning energy (kWh) | 7,571 | 3,242 |"], [], "hours", 3242),
    (7.571, ["|  | BLOOMz-7B |\n| Finetuning energy (MWh) | 7.571 |"], [], "MWh", 7.571),
    # ... but not when a mention already writes it in the answer's unit, or the answer unit has no scale
    (3500, ["| Llama 4 Scout | 3,500 |"], ["3,500 MWh of training", "3,500 GWh in total"], "GWh", 3500),
    (3500, ["| Llama 4 Scout | 3,500 |"], ["3,500 MWh of training"], "tCO2e", 3500),
])
def test_restate(v, pointed, others, unit, expected) -> None:
    assert math.isclose(restate(v, pointed, others, unit), expected, rel_tol=1e-9)


def test_numbers_in_reads_magnitude_suffixes() -> None:
    nums = numbers_in("a $40M run of 8B parameters on 1.25T tokens, 4MB of RAM")
    for expected in (40, 40e6, 8, 8e9, 1.25, 1.25e12, 4):
        assert any(math.isclose(n, expected) for n in nums), expected
    assert 4e6 not in nums  # "4MB" is megabytes, not 4 million


def test_read_reply_restates_and_repoints() -> None:
    units = [ContextBlock("jegham2025", "we consider a baseline of 1 billion queries per day"),
             ContextBlock("jegham2025b", "yielding a total of approximately 772 billion GPT-4o queries in 2025")]
    r = reader.read_reply("numeric", "queries", {"units": [1], "value": 772}, units)
    assert (r.value, r.pointers, r.grounded) == ("772000000000", (2,), True)
    assert reader.refs_for(r, units) == ["jegham2025b"]


def test_grounded_answer_cites_only_the_pointed_units_that_state_it() -> None:
    units = [ContextBlock("amazon2023", "AWS reached a WUE of 0.18 L/kWh in 2023."),
             ContextBlock("li2025b", "Water use effectiveness varies across data centers.")]
    r = reader.read_reply("numeric", "L/kWh", {"units": [1, 2], "value": 0.18}, units)
    assert r.pointers == (1,) and reader.refs_for(r, units) == ["amazon2023"]


def test_a_table_record_cell_takes_the_unit_and_magnitude_its_column_name_writes() -> None:
    # one record per column (a wide table): the record's head names the column
    wide = "Water for Training (million L) Total Water: U.S. Average = 5.439; Arizona = 9.629"
    assert mentions(wide) == [Mention(5.439, pytest.approx(5.439e6), "L"), Mention(9.629, pytest.approx(9.629e6), "L")]
    # one record per row: each cell's own column name; a name without a unit leaves its cell bare
    row = "Arizona: PUE = 1.180; Water for Training (million L) Total Water = 9.629; Energy (kWh) = 3; Cost (L/kWh) = 2"
    assert mentions(row) == [Mention(1.18, 1.18, ""), Mention(9.629, pytest.approx(9.629e6), "L"), Mention(3, 3, "kWh"),
                             Mention(2, 2, "")]
    assert mentions("g4dn.xlarge (T4): α = -0.185") == [Mention(0.185, 0.185, "")]
    # the model copies the digits; the answer in liters gets the million back, one in million liters does not
    assert restate(9.629, [wide], [], "liters") == pytest.approx(9.629e6)
    assert restate(9.629, [wide], [], "million liters") == pytest.approx(9.629)
    # a grid's header with a magnitude word does the same for its cells
    grid = "| Site | Water (million L) |\n|---|---|\n| Iowa | 4.814 |"
    assert mentions(grid)[-1] == Mention(4.814, pytest.approx(4.814e6), "L")

