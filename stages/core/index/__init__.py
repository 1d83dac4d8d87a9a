"""Stage index: the LanceDB vector table, the BM25 units, and the vocabulary (keywords and units).
"""
