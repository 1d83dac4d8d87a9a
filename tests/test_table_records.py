"""Markdown tables shown to the reader as records (stages/core/table_records.py)."""
from stages.core.answer.params import AnswerParams
from stages.core.answer.record import ContextBlock
from stages.core.answer.table_records import table_records
from stages.core.answer.typed_answer import (
    TypedMember,
    TypedSetup,
    answer_question_typed,
)
from tests.test_reader import ScriptedTypedLLM

ENERGY_MIX = """Table 2: Percent energy sourced from: Renewable (e.g.
| Consumer | Renew. | Gas | Coal |
|---|---|---|---|
| Amazon-AWS | 17% | 24% | 30% |
| Google | 56% | 14% | 15% |
| Microsoft | 32% | 23% | 31% |"""

WIDE = """Table 2. The number of hours and the energy used in kWh.
| Model GPU | BERT finetune 4·V100 | ViT Large 4·V100 | ViT Huge 4·V100 |
|---|---|---|---|
| Hours | 6 | 90 | 216 |
| kWh | 3.1 | 93.3 | 237.6 |"""


def test_rows_become_records_that_name_row_and_column():
    out = table_records(ENERGY_MIX)
    assert out.split("\n") == ["Table 2: Percent energy sourced from: Renewable (e.g.",
                               "Amazon-AWS: Renew. = 17%; Gas = 24%; Coal = 30%",
                               "Google: Renew. = 56%; Gas = 14%; Coal = 15%",
                               "Microsoft: Renew. = 32%; Gas = 23%; Coal = 31%"]


def test_a_wide_table_gets_one_record_per_column():
    out = table_records(WIDE).split("\n")
    assert out[1:] == ["BERT finetune 4·V100: Hours = 6; kWh = 3.1",
                       "ViT Large 4·V100: Hours = 90; kWh = 93.3",
                       "ViT Huge 4·V100: Hours = 216; kWh = 237.6"]


def test_empty_cells_are_left_out_and_prose_around_the_table_is_kept():
    text = "Before.\n| Site | PUE | WUE |\n|---|---|---|\n| Iowa | 1.1 |  |\n| Texas | 1.2 | 0.4 |\nAfter."
    assert table_records(text) == "Before.\nIowa: PUE = 1.1\nTexas: PUE = 1.2; WUE = 0.4\nAfter."


def test_mangled_tables_stay_as_they_are():
    glued_values = ("Table 3: Estimated cost.\n| Model | Hardware Power (W) Hours kWh |\n|---|---|\n"
                    "| ELMo P100x3 | 517.66 336 275 |")
    glued_header = ("| Coal 38 No | energy source Number of Models Low-Carbon? Average Carbon Intensity |\n"
                    "|---|---|\n| Oil 12 No | 453.6 |")
    ragged = "| A | B | C |\n|---|---|---|\n| x | 1 |\n"
    no_separator = "| A | B |\n| x | 1 |"
    empty_name = "| A |  |\n|---|---|\n| x | 1 |"
    for text in (glued_values, glued_header, ragged, no_separator, empty_name, "No table | here."):
        assert table_records(text) == text


def test_one_value_with_its_interval_is_a_well_formed_cell():
    text = "| Year | Health Cost |\n|---|---|\n| 2019 | 0.70(0.54, 0.87) |"
    assert table_records(text) == "2019: Health Cost = 0.70(0.54, 0.87)"


def test_the_reader_sees_records_only_when_asked():
    seen: list[str] = []
    llm = ScriptedTypedLLM({(0, 0): '{"units": [1], "value": 93.3}'})
    real = llm.complete

    def spy(messages, **kw):
        seen.append(messages[-1]["content"])
        return real(messages, **kw)

    llm.complete = spy
    member = TypedMember([[ContextBlock("dodge2022", WIDE, media="table")]], 0, 0.0)
    setup = TypedSetup([{"role": "system", "content": "s"}])
    on = answer_question_typed(llm, "q", "ViT Large kWh?", "kWh", [member], AnswerParams(table_records=True), setup)
    answer_question_typed(llm, "q", "ViT Large kWh?", "kWh", [member], AnswerParams(table_records=False), setup)
    assert "ViT Large 4·V100: Hours = 90; kWh = 93.3" in seen[0] and "| 93.3 |" not in seen[0]
    assert "| 93.3 |" in seen[1]
    assert on[0].answer.answer_value == "93.3" and on[0].answer.grounded


def test_an_escaped_pipe_stays_inside_its_cell():
    # cells are split as tables.table_parts splits them (tables.markdown_cells)
    assert table_records("| Model | Size |\n|---|---|\n| a \\| b | 7B |") == "a | b: Size = 7B"
