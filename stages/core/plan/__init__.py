"""Stage plan: a question becomes retrieval queries (the LLM planner, or the question alone); the
financial metric a question names and the line items it is computed from (metrics.py), which retrieval
and the analyst reader both read.
"""
