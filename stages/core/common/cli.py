"""Entry-point wrapper: expected failures end in one clear line, not a traceback."""
from __future__ import annotations

import sys
from collections.abc import Callable

from stages.core.common.errors import UserError
from stages.core.common.logs import setup_logging

EXPECTED = (UserError, FileNotFoundError)


def run(main: Callable[[], object], name: str) -> None:
    """Run a stage's main(); known input/config/endpoint errors exit 1 with one message."""
    setup_logging()
    try:
        main()
    except EXPECTED as e:
        print(f"error in stage {name}: {e}", file=sys.stderr)
        sys.exit(1)
