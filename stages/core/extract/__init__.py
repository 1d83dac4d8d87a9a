"""Stage extract: corpus files (PDF, WattBot JSON, Markdown, text) -> pages, lines, images, tables.
"""
