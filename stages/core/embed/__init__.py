"""Stage embed: text embedders, the embedding cache, and the bottom-up tree vectors.
"""
