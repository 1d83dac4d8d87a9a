"""Entry-point wrapper: expected failures end in one clear line, not a traceback."""
from __future__ import annotations

import sys
from collections.abc import Callable

from stages.core.dataio import InputError
from stages.core.llm import LLMError
from stages.core.logs import setup_logging
from stages.core.models import ModelWeightsError
from stages.core.params import ParamError

EXPECTED = (ParamError, InputError, LLMError, ModelWeightsError, FileNotFoundError)


def run(main: Callable[[], object], name: str) -> None:
    """Run a stage's main(); known input/config/endpoint errors exit 1 with one message."""
    setup_logging()
    try:
        main()
    except EXPECTED as e:
        print(f"error in stage {name}: {e}", file=sys.stderr)
        sys.exit(1)
