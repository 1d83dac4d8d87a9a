"""Stage caption: image nodes get searchable text (a vision model through the LLM client, else the
document's own caption).
"""
