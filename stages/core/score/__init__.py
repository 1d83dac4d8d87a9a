"""Stage score: the WattBot metric, the per-question verdicts, error categories and the report.
"""
