"""Stage build_tree: extracted lines -> document > section > paragraph > sentence trees, table nodes;
and the read-only view of the tree that retrieve and answer navigate.
"""
