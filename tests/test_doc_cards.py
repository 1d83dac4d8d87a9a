"""Document cards and the documents a question names; the named-document filter and prior
in retrieval over a real tiny LanceDB index."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from stages.core.index.cards import (DocNamer, annual_years, build_cards, doc_types, norm_name, periods, short_forms, surnames,
                                     word_docs)
from stages.core.index.keywords import tokenize
from stages.core.index.store import Index, IndexParams, build_index
from stages.core.retrieve.params import RetrieveParams
from stages.core.retrieve.search import Retriever
from stages.core.retrieve.statements import StatementPages
from stages.core.tree.navigate import TreeView

PAPERS = pl.DataFrame({
    "id": ["dodge2022", "dodge2019", "strubell2019", "luccioni2024", "schwartz2019", "amazon2023"],
    "type": ["paper", "paper", "paper", "paper", "paper", "report"],
    "title": ["Measuring the Carbon Intensity of AI in Cloud Instances", "Fine-Tuning Pretrained Language Models",
              "Energy and Policy Considerations for Deep Learning in NLP",
              "Power Hungry Processing: Watts Driving the Cost of AI Deployment?", "Green AI",
              "2023 Amazon Sustainability Report"],
    "year": ["2022", "2019", "2019", "2024", "2019", "2023"],
    "citation": ["Jesse Dodge, Taylor Prewitt, Emma Strubell (2022). Measuring the Carbon Intensity. FAccT.",
                 "Jesse Dodge, Gabriel Ilharco (2019). Fine-Tuning. arXiv.",
                 "Emma Strubell, Ananya Ganesh, Andrew McCallum (2019). Energy and Policy. ACL.",
                 "Alexandra Sasha Luccioni, Yacine Jernite, Emma Strubell. (2024). Power Hungry Processing. arXiv.",
                 "Roy Schwartz, Jesse Dodge, Noah A. Smith, Oren Etzioni (2019). Green AI. CACM.",
                 "Amazon Staff. (2023). Amazon Sustainability Report. https://amazon.com/report.pdf"],
})

FILINGS = pl.DataFrame({
    "id": ["aapl-10k-2023", "aapl-10k-2024", "aapl-10q-2024q3", "msft-10k-2024", "nvda-8k-2024"],
    "title": ["Annual report", "Annual report", "Quarterly report", "Annual report", "Current report"],
    "company": ["Apple Inc.", "Apple Inc.", "Apple Inc.", "Microsoft Corporation", "NVIDIA Corp"],
    "fiscal_period": ["FY2023", "FY2024", "Q3 FY2024", "FY2024", "Q2 FY2025"],
    "form_type": ["10-K", "10-K", "10-Q", "10-K", "8-K"],
})


def paper_namer() -> DocNamer:
    """The namer over PAPERS, with word weights from a corpus whose every text says the field's
    common words (as WattBot's papers all say 'energy', 'carbon', 'deep learning')."""
    cards = build_cards(PAPERS)
    common = set(tokenize("AI energy carbon deep learning model cloud instances training cost policy language report"))
    texts = {c.doc_id: set(tokenize(f"{c.title} {c.title_block}")) | common for c in cards}
    return DocNamer(cards, word_docs(cards, texts), len(texts))


def named(namer: DocNamer, question: str) -> list[str]:
    return [d.doc_id for d in namer.name(question)]


def test_surnames_of_messy_citations_and_the_first_author_from_the_doc_id():
    assert surnames("Jesse Dodge, Emma Strubell (2022). Measuring. FAccT.") == ["Dodge", "Strubell"]
    # no year, names run together: the doc id's stem finds the first author
    assert surnames("Jared Fernandez Clara Na , Yonatan Bisk. https://arxiv.org/x", "fernandez2025")[0] == "Fernandez"
    assert surnames("Amazon Staff. (2023). Report.", "amazon2023") == ["Amazon", "Staff"]


def test_author_et_al_and_year_name_one_paper():
    namer = paper_namer()
    assert named(namer, "In the 2022 paper by Dodge et al., how much electricity did ViT use?") == ["dodge2022"]
    assert named(namer, "According to Dodge et al. (2019), which seeds mattered?") == ["dodge2019"]
    # "et al." after a surname names first authors only: Strubell is a co-author of two other papers
    assert named(namer, "What did Strubell et al. estimate for BERT?") == ["strubell2019"]
    top = namer.name("the 2024 study by Luccioni, Jernite and Strubell")[0]
    assert top.doc_id == "luccioni2024" and top.confidence == pytest.approx(1.0)
    assert any(c.startswith("author:") for c in top.cues) and "year:2024" in top.cues


def test_title_words_and_a_whole_short_title_name_a_paper():
    namer = paper_namer()
    assert named(namer, "In the Power Hungry Processing study, what was the mean energy?") == ["luccioni2024"]
    assert named(namer, "What did the Green AI position paper recommend?") == ["schwartz2019"]
    assert named(namer, "How many AWS components did Amazon's 2023 sustainability report say were reused?") == [
        "amazon2023"]


def test_a_title_word_only_one_document_holds_names_it_alone():
    namer = paper_namer()
    assert named(namer, "How many watts did the Hungry benchmark report?") == ["luccioni2024"]
    # without text frequencies (titles only) one title word is not enough
    assert DocNamer(build_cards(PAPERS)).name("How many watts did the Hungry benchmark report?") == []


def test_generic_questions_name_nothing():
    namer = paper_namer()
    for q in ("What is the energy consumption of training AI models in 2023?",
              "How much carbon does deep learning emit?",
              "True or False: cloud instances are always greener.",
              "Which paper reports the largest number?"):
        assert namer.name(q) == [], q


def test_company_and_fiscal_period_and_form_type_from_metadata_columns():
    namer = DocNamer(build_cards(FILINGS))
    assert named(namer, "What was Apple's total net sales in fiscal 2023?") == ["aapl-10k-2023"]
    assert named(namer, "In Apple's FY2024 annual report, how many employees did it have?") == ["aapl-10k-2024"]
    assert named(namer, "What gross margin did Apple report for the third quarter of fiscal 2024?") == [
        "aapl-10q-2024q3"]
    assert named(namer, "Did Apple's 10-Q mention tariffs?") == ["aapl-10q-2024q3"]
    assert set(named(namer, "How did Apple describe its supply chain risks?")) == {
        "aapl-10k-2023", "aapl-10k-2024", "aapl-10q-2024q3"}
    assert named(namer, "What revenue did Microsoft report for fiscal 2024?") == ["msft-10k-2024"]
    # a fiscal year without a quarter asks for the year: the annual report, not the quarter's
    assert named(namer, "What were Apple's net sales in fiscal 2024?") == ["aapl-10k-2024"]
    assert named(namer, "What did NVIDIA's earnings release say about data center revenue?") == ["nvda-8k-2024"]
    assert namer.name("What was the total revenue in fiscal 2024?") == []  # a period alone names nothing
    assert namer.name("Which company had the most employees?") == []


def test_an_annual_reports_fiscal_year_from_its_card():
    # a quarterly report's columns are quarters and a current report has no statements of whole years
    assert annual_years(build_cards(FILINGS)) == {"aapl-10k-2023": 2023, "aapl-10k-2024": 2024, "msft-10k-2024": 2024}
    assert annual_years(build_cards(PAPERS)) == {}  # a paper is no annual report


def test_a_forecast_is_also_looked_for_in_the_filings_before_the_year_it_is_for():
    namer = DocNamer(build_cards(FILINGS))
    # guidance for fiscal 2024 is given in the fiscal 2023 filing too
    assert set(named(namer, "Is Apple's revenue growth expected to accelerate in FY2024?")) == {
        "aapl-10k-2023", "aapl-10k-2024"}
    assert named(namer, "Was Apple's revenue growth faster in FY2024?") == ["aapl-10k-2024"]  # no forecast
    # "as of" anchors the question to its period's filing
    assert named(namer, "As of FY2024, what revenue growth did Apple expect for FY2025?") == ["aapl-10k-2024"]
    # with no year, the latest filings state the current expectation
    assert set(named(namer, "How much does Apple expect to pay for its bonds in the future?")) == {
        "aapl-10k-2024", "aapl-10q-2024q3"}
    assert set(named(namer, "How much did Apple pay for its bonds?")) == {
        "aapl-10k-2023", "aapl-10k-2024", "aapl-10q-2024q3"}


def test_a_company_short_form_in_capitals_names_its_filings():
    meta = pl.DataFrame({"id": ["jpm-10q", "jj-8k", "mgm-10k", "bb-10k", "gm-10k"],
                         "title": ["Quarterly report", "Earnings release", "Annual report", "Annual report",
                                   "Annual report"],
                         "company": ["JPMorgan", "Johnson & Johnson", "MGM Resorts", "Best Buy", "General Mills"]})
    namer = DocNamer(build_cards(meta))
    assert named(namer, "Which of JPM's business segments had the lowest net revenue?") == ["jpm-10q"]
    assert named(namer, "How did JnJ's US sales growth compare to its international sales growth?") == ["jj-8k"]
    assert named(namer, "Did J&J raise its guidance?") == ["jj-8k"]
    assert named(namer, "Which type of debt did MGM invest in most?") == ["mgm-10k"]
    # a short form counts only in capitals, and a common word's prefix names nothing
    assert namer.name("What is the best way to read the general ledger?") == []
    assert namer.name("How did the jpm desk do?") == []
    assert short_forms("lockheed martin") == {"loc", "lock", "lockh", "lockhe"}  # 'lm': too short


def test_the_first_page_title_block_names_a_document_without_metadata_names():
    meta = pl.DataFrame({"id": ["f1", "f2", "f3"], "title": ["Filing one", "Filing two", "Filing three"]})
    fronts = {"f1": "ACME ROCKET WORKS INC. FORM 10-K annual report for the fiscal year ended 2024",
              "f2": "GLOBEX TURBINE HOLDINGS FORM 10-K annual report for the fiscal year ended 2024",
              "f3": "INITECH SOFTWARE LTD FORM 10-Q quarterly report for the quarter ended 2024"}
    rows = []
    for d, t in fronts.items():
        rows += [(f"{d}:sec0:p0", f"{d}:sec0", "paragraph", d, t, 1, True),
                 (f"{d}:sec0:p1", f"{d}:sec0", "paragraph", d, "Revenue grew in all segments.", 2, False)]
    nodes = pl.DataFrame(rows, orient="row",
                         schema=["node_id", "parent_id", "level", "doc_id", "text", "page", "is_front_matter"])
    cards = build_cards(meta, nodes, block_chars=300)
    assert cards[0].title_block.startswith("ACME ROCKET")
    namer = DocNamer(cards)
    assert named(namer, "What did Acme Rocket Works report as revenue?") == ["f1"]
    assert namer.name("What was the revenue for the fiscal year?") == []  # boilerplate every filing shares
    assert DocNamer(build_cards(meta, nodes, block_chars=0)).name("What did Acme Rocket Works report?") == []


def test_period_and_type_parsing():
    assert periods("Q3 FY2024") == ({"2024"}, {"q3"})
    assert periods("the second fiscal quarter of fiscal '25") == ({"2025"}, {"q2"})
    assert doc_types("its annual report on Form 10-K") == {"10-k"}
    assert norm_name("The Coca-Cola Company") == "coca cola"
    assert norm_name("Apple Inc.") == "apple"


# retrieval over a real tiny LanceDB index: two filings of one company share boilerplate


def filings_index(tmp_path):
    docs = {
        "acme-2023": ["ACME ROCKET WORKS annual report fiscal 2023",
                      "Risk factors: our revenue depends on launch demand and supply of engines.",
                      "Net revenue for fiscal 2023 was 410 million dollars."],
        "acme-2024": ["ACME ROCKET WORKS annual report fiscal 2024",
                      "Risk factors: our revenue depends on launch demand and supply of engines.",
                      "Net revenue for fiscal 2024 was 575 million dollars."],
        "globex-2024": ["GLOBEX TURBINES annual report fiscal 2024",
                        "Net revenue for fiscal 2024 was 990 million dollars, and revenue grew."],
    }
    rows, vecs = [], []
    rng = np.random.default_rng(7)
    for d, paras in docs.items():
        rows.append((d, None, "document", d, "", 0, 1, None))
        rows.append((f"{d}:sec0", d, "section", d, "", 0, 1, None))
        for j, t in enumerate(paras):
            pid = f"{d}:sec0:p{j}"
            rows += [(pid, f"{d}:sec0", "paragraph", d, t, j, 1, j == 0),
                     (f"{pid}:s0", pid, "sentence", d, t, 0, 1, j == 0)]
    nodes = pl.DataFrame(rows, orient="row", schema=["node_id", "parent_id", "level", "doc_id", "text", "ordinal",
                                                     "page", "is_front_matter"]).with_columns(
        pl.lit(None, dtype=pl.String).alias("attachment_type"), pl.lit(False).alias("is_reference"))
    searchable = nodes.filter(pl.col("level").is_in(["paragraph", "sentence"]))
    for _ in range(searchable.height):
        v = rng.normal(size=8).astype(np.float32)
        vecs.append(v / np.linalg.norm(v))
    vectors = searchable.select("node_id", "level", "doc_id").with_columns(
        pl.Series("vector", np.stack(vecs), dtype=pl.Array(pl.Float32, 8)))
    meta = pl.DataFrame({"id": list(docs), "title": ["Annual report"] * 3, "company": ["Acme", "Acme", "Globex"],
                         "fiscal_year": ["2023", "2024", "2024"]})
    build_index(nodes, vectors, meta, tmp_path, IndexParams(ann_min_rows=10_000), "toy")
    return nodes


class FixedEmbedder:
    """One fixed query vector (unit tests of retrieval: document focus, statement lead; not of embedding)."""
    name, dim = "toy", 8

    def embed(self, texts):
        return np.ones((len(texts), 8), dtype=np.float32) / np.sqrt(8)


def retriever(tmp_path, nodes):
    from stages.core.embed.embedder import EmbeddingCache

    r = Retriever.__new__(Retriever)
    r.index, r.tree, r.embedder = Index(tmp_path), TreeView(nodes), FixedEmbedder()
    r.statements = StatementPages(nodes)
    r.cache = EmbeddingCache(tmp_path / "e.sqlite")
    return r


def test_prior_puts_the_named_filing_first(tmp_path):
    r = retriever(tmp_path, filings_index(tmp_path))
    q = ["What net revenue did Acme report for fiscal 2024?"]
    assert [d.doc_id for d in r.index.named_docs(q[0])] == ["acme-2024"]
    none = r.retrieve(q, RetrieveParams(max_context_tokens=400))
    assert {u.doc_id for u in none} != {"acme-2024"}  # without naming, other filings' text comes too
    prior = r.retrieve(q, RetrieveParams(max_context_tokens=400, named_docs="prior"))
    assert prior[0].doc_id == "acme-2024" and "575 million" in prior[0].text
    # a question that names nothing retrieves as with named_docs: none
    generic = ["What net revenue was reported?"]
    assert [u.key for u in r.retrieve(generic, RetrieveParams(max_context_tokens=400, named_docs="prior"))] == \
        [u.key for u in r.retrieve(generic, RetrieveParams(max_context_tokens=400))]


def test_under_the_prior_bm25_searches_without_the_names_that_named_the_filing(tmp_path):
    r = retriever(tmp_path, filings_index(tmp_path))
    q = "What net revenue did Acme report for fiscal 2024?"
    weights = r.doc_weights(q, RetrieveParams(named_docs="prior"))
    assert weights is not None
    assert "acme" not in r.keyword_query(q, weights).lower() and "net revenue" in r.keyword_query(q, weights)
    assert r.keyword_query(q, None) == q  # named_docs: none searches the question as written
    # a fiscal year also as the year a statement's column writes
    assert "FY2024 2024" in r.keyword_query("What net revenue did Acme report for FY2024?", weights)
    assert "FY23 2023" in r.keyword_query("What net revenue did Acme report for FY23?", weights)
