"""The typed core the stage modules call, one package per stage (see the README's code map).

Importable and testable without DVC. This file and stages/__init__.py must stay inert
(a docstring only): no stage lists them as a dep (tests/test_pipeline_deps.py).
"""
