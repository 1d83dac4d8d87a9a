"""A copied number read back with the magnitude or unit the context writes next to it (restate.py).

The dev questions whose copied digits lost their magnitude word, suffix or unit: d607, d110, d409, d208, d308.
"""
from __future__ import annotations

import math

import pytest

from stages.core.answer import typed_reader as reader
from stages.core.answer.grounding import numbers_in
from stages.core.answer.record import ContextBlock
from stages.core.answer.restate import Mention, mentions, more_precise, restate, unit_scale


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


def test_a_copied_rounding_becomes_the_one_precise_number_it_rounds() -> None:
    """train q124: "5.4 million liters" copied from prose, 5.439 (million L) in a table, the grader's 0.1%."""
    prose = "training GPT-3 can consume a total of 5.4 million liters of water"
    table = "Water for Training (million L) Total Water: U.S. Average = 5.439; Arizona = 9.629"
    assert more_precise(5.4e6, 5.4, [prose, table], "liters") == pytest.approx(5.439e6)
    # nothing more precise stated, or two numbers it could round: the copied value stays
    assert more_precise(5.4e6, 5.4, [prose], "liters") == 5.4e6
    assert more_precise(5.4e6, 5.4, [prose, table, "about 5.43 million liters"], "liters") == 5.4e6
    # a whole number or a number already written with three digits is not taken for a rounding
    assert more_precise(30000, 30000, ["30,000 GPU hours and 30,060 in all"], "hours") == 30000
    assert more_precise(5.44e6, 5.44, [prose, table], "liters") == 5.44e6
    # a small number Python writes with an exponent keeps its own last digit: 1.5e-05 rounds nothing at 0.35
    assert more_precise(1.5e-05, 1.5e-05, ["1.5e-05 kWh and 0.35 kWh", "0.0000153"], "kWh") == pytest.approx(1.53e-05)
    # a number of a unit family that neither the answer nor the copied mention has does not count
    assert more_precise(1.2, 1.2, ["PUE 1.2", "1.23 kWh"], "seconds") == 1.2
    assert more_precise(1.2, 1.2, ["PUE 1.2", "1.23 kWh"], "") == 1.2
    assert more_precise(1.2, 1.2, ["PUE 1.2", "1.23 kWh"], "kWh") == pytest.approx(1.23)
    assert more_precise(1.2, 1.2, ["PUE 1.2", "| Site | PUE |\n|---|---|\n| Iowa | 1.23 |"], "") == pytest.approx(1.23)


def test_a_minus_sign_the_pointed_units_always_write_comes_back_unless_a_decrease_is_asked():
    from stages.core.answer.record import ContextBlock
    from stages.core.answer.restate import written_negative
    from stages.core.answer.typed_reader import read_reply

    # samsi2024 Table III (dev d960): "-34.66" in a "% change" column, read back as 34.66
    row = "TABLE III: Effects of GPU power capping | 512 | Time 150W: 21.70 | Energy 150W: -34.66 | Token 150W: -17.83"
    q = "What was the percent change in energy with a 150W power cap for an output length of 512?"
    assert written_negative(34.66, [row], q)
    assert not written_negative(21.70, [row], q)  # written without a sign
    assert not written_negative(34.66, [row], "By what percent was energy reduced with a 150W cap?")
    assert not written_negative(34.66, [row + " | saved 34.66 kWh"], q)  # written both ways: the copy decides
    assert not written_negative(-34.66, [row], q)
    # the dash of a range is no minus sign, and 95 is also written "95.00" (never "950")
    sm = "What average SM utilization did LLaMA 65B reach with 4 shards at an output length of 256?"
    assert not written_negative(95.0, ["SM utilization was in the 94%-95% range"], sm)
    assert not written_negative(95.0, ["SM utilization was in the 94%-95% range", "| 4 256 23.36 95.00 |"], sm)
    assert not written_negative(5.0, ["between 10-5 and 20"], sm) and written_negative(5.0, ["a change of (-5)"], sm)
    assert not written_negative(95.0, ["a change of -950"], sm) and written_negative(95.0, ["change: -95.00 |"], sm)
    units = [ContextBlock("samsi2024", row, "table")]
    data = {"units": [1], "value": 34.66}
    assert read_reply("numeric", "percent", data, units, question=q).value == "-34.66"
    # an operation with no second operand copies a: a gets the sign back too (d960's "difference", a 34.66, b 0)
    op = {"units": [1], "operation": "difference", "a": 34.66, "b": 0}
    assert read_reply("numeric", "percent", op, units, question=q).value == "-34.66"
