"""The errors a user can fix: every stage ends on one of these with one clear line.

Each module's own error (ParamError, InputError, LLMError, ModelWeightsError, ...)
derives from `UserError` as well as from the built-in class it always was, so the
entry point (`common.cli.run`) catches them all without importing the modules that
raise them: a stage's code stays free of packages it does not run.
"""
from __future__ import annotations


class UserError(Exception):
    """A wrong input, parameter, endpoint or install, explained in the message."""
