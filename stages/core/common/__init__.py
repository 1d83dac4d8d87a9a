"""What every stage shares and nothing else: params, artifacts, input files, values, errors, logs, caches.

Imports nothing else of the project (tests/test_layering.py), so an edit elsewhere never reruns a
stage through it.
"""
