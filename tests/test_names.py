"""names.tidy_name: the name, without the kind of thing the question asked for."""
from stages.core.answer.names import asked_kind_words, tidy_name
from stages.core.answer.record import ContextBlock
from stages.core.answer.typed_reader import read_reply


def test_the_which_phrase_names_the_kind_asked_for():
    assert asked_kind_words("Which dataset did the Mélange evaluation use?") == {"dataset"}
    assert asked_kind_words("Which Finnish project, mentioned in the essay, proposed X?") == {"finnish", "project"}
    assert asked_kind_words("What is the name of the benchmark suite?") == set()
    assert asked_kind_words("Who wrote it?") == set()


def test_the_question_words_at_the_ends_and_a_bracketed_expansion_go():
    """The 1.5B reader's answers to dev d721 and d805, which a grader comparing names takes for neither."""
    assert tidy_name("Chatbot Arena dataset", "Which dataset did the Mélange evaluation use?") == "Chatbot Arena"
    assert tidy_name("Finnish ETAIROS (Ethical AI for the Governance of the Society)",
                     "Which Finnish project, mentioned in the essay, proposed X?") == "ETAIROS"
    # a word inside the name stays; a name made only of asked words stays whole
    assert tidy_name("Power Dataset Tool", "Which dataset did they use?") == "Power Dataset Tool"
    assert tidy_name("dataset", "Which dataset did they use?") == "dataset"
    assert tidy_name("ML.ENERGY Benchmark", "What is the name of the benchmark suite?") == "ML.ENERGY Benchmark"


def test_read_reply_tidies_text_answers():
    units = [ContextBlock("griggs2024", "We use the Chatbot Arena dataset for short-context chat.")]
    data = {"units": [1], "answer": "Chatbot Arena dataset"}
    q = "Which dataset did the Mélange evaluation use to represent short-context chat?"
    tidy = read_reply("text", "", data, units, question=q)
    assert tidy.value == "Chatbot Arena" and tidy.grounded
    assert read_reply("text", "", data, units).value == "Chatbot Arena dataset"  # no question: as written
