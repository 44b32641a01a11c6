"""Checks every transition table shares: each (state, event) pair without a row raises InvalidTransition
naming the state, the event and the machine's story."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Any

import pytest

from scylla_singa.common.transition_table import InvalidTransition, TransitionTable, key_name


def sample_event(kind: type) -> Any:
    """An instance of event type `kind`, its required fields filled with None."""
    return kind(**{f.name: None for f in fields(kind)
                   if f.init and f.default is MISSING and f.default_factory is MISSING})


def missing_pairs(table: TransitionTable) -> list:
    """pytest params of every (state, event) pair the table has no row for, with readable ids."""
    pairs = table.missing()
    assert pairs, f"{table.machine}: every pair has a row; nothing to refuse"
    return [pytest.param(s, e, id=f"{key_name(s)}-{key_name(e)}") for s, e in pairs]


def assert_refused_with_story(handle: Callable[[], Any], machine: Any, state: Any, event: Any,
                              earlier: str = "an earlier transition") -> InvalidTransition:
    """`handle()` (the machine in `state` given `event`) raises InvalidTransition with the story so far."""
    machine.story.add(earlier)
    with pytest.raises(InvalidTransition) as info:
        handle()
    err = info.value
    assert (err.state, err.event) == (key_name(state), key_name(event))
    assert earlier in err.story and earlier in str(err)
    assert f"state {key_name(state)!r}" in str(err) and key_name(event) in str(err)
    return err
