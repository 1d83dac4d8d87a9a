"""Reading a model's JSON reply: the one parser every caller of the LLM uses."""
from __future__ import annotations

import json
import re
from typing import Any


def parse_json_reply(text: str | None) -> dict[str, Any] | None:
    """The reply's JSON object, or None when it is empty, truncated or not JSON.

    Tolerates what models wrap around JSON when no grammar constrains them: a Markdown
    code fence, or words before and after the object."""
    text = (text or "").strip()
    if not text:
        return None
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", text)
    for candidate in (text, text[text.find("{") : text.rfind("}") + 1] if "{" in text else ""):
        try:
            data = json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    return None
