"""Stage plan: a question becomes retrieval queries (the LLM planner, or the question alone).
"""
