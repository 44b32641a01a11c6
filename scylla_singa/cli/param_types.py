"""Parameter types the command groups share."""

from __future__ import annotations

from typing import Any

import click

from scylla_singa.common.durations import parse_duration


class Duration(click.ParamType):
    """A time flag: "30s", "500ms", "2m", "1h" or seconds (scylla_singa.common.durations), as seconds.

    With `allow_none`, "none" means no duration (None).
    """

    name = "duration"

    def __init__(self, allow_none: bool = False) -> None:
        self.allow_none = allow_none

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float | None:
        if isinstance(value, float):
            return value
        try:
            return parse_duration(value, allow_none=self.allow_none)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)
