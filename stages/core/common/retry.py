"""The context of an answer retry, shared by the stage that builds it (retrieve) and the readers that ask it."""
from __future__ import annotations

# each retry's context is this many times wider than the one before (depth, budget and final units): a
# reply the first context could not give is asked again over a clearly larger one, not a slightly larger one
RETRY_K_FACTOR = 2.0
