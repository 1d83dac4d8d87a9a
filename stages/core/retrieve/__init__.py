"""Stage retrieve: dense + BM25 search per question, reranking, tree-aware context within a budget,
the retry contexts, and retrieval metrics for labelled questions.
"""
