"""Whether parsed JSON is already in the dict form, so a call can skip its trip through protobuf.

Why: codec.decode_call turns a JSON call into the dict form by building
the protobuf Call message and reading it back (about 50 us for a
framework's ACCEPT of one task, the costliest call of every task, issue 17).
Frameworks almost always send exactly that form already: field names of
the .proto, enums as names, doubles as JSON numbers with a fraction, ids as
strings. For such a body the trip returns what went in, so it can be left
out.

How: `in_canonical_form(descriptor, data)` walks the body against the
message's descriptor and says yes only when the trip could change nothing
and refuse nothing: every key a field, every value of exactly the type the
dict form holds (no strings for numbers, no null, no empty list), integers
in their range, enum names the enum has, bytes in canonical base64, strings
valid UTF-8, required fields present, at most one member of a oneof. The one
change it makes itself is the trip's commonest: an integer in a double field
(`"refuse_seconds": 1`) becomes a float, in place. Anything else (maps,
32-bit floats, what Mesos would convert, drop or refuse) says no, and the
full conversion decides, with Mesos's messages. The caller bounds the
nesting first (MAX_JSON_DEPTH), so the walk recurses no deeper than that.
tests/unit/mesos/test_canonical_form.py checks, over real calls and their
mutations, that whatever this accepts the full conversion returns as it.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

# What a field's values are checked as (Kind) and with what (detail).
_STRING, _BYTES, _BOOL, _DOUBLE, _INTEGER, _ENUM, _MESSAGE, _NEVER = range(8)

_INTEGER_RANGES = {
    FieldDescriptor.TYPE_INT32: (-2 ** 31, 2 ** 31 - 1), FieldDescriptor.TYPE_SINT32: (-2 ** 31, 2 ** 31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-2 ** 31, 2 ** 31 - 1), FieldDescriptor.TYPE_UINT32: (0, 2 ** 32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2 ** 32 - 1), FieldDescriptor.TYPE_INT64: (-2 ** 63, 2 ** 63 - 1),
    FieldDescriptor.TYPE_SINT64: (-2 ** 63, 2 ** 63 - 1), FieldDescriptor.TYPE_SFIXED64: (-2 ** 63, 2 ** 63 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2 ** 64 - 1), FieldDescriptor.TYPE_FIXED64: (0, 2 ** 64 - 1)}


@dataclass(frozen=True, slots=True)
class _Plan:
    """One message type's fields as the walk checks them (built once per type)."""

    fields: dict[str, tuple[int, Any, bool]]   # name -> (kind, detail, repeated)
    required: frozenset[str]
    oneofs: tuple[frozenset[str], ...]


_PLANS: dict[Descriptor, _Plan] = {}
# The integers a double holds exactly: the only ones turned into doubles here (float() of them is exact).
_EXACT_INTEGERS = 2 ** 53


def in_canonical_form(descriptor: Descriptor, data: Any) -> bool:
    """Whether `data` is a `descriptor` message in the dict form, which protobuf's round trip keeps as is.

    An integer in a (non-repeated) double field is made a float in place first,
    as the round trip would make it: frameworks write `"refuse_seconds": 1`.
    On False, `data` may hold such floats already; the full conversion gives
    the same for them, so the caller needs no copy.
    """
    if type(data) is not dict:
        return False
    plan = _PLANS.get(descriptor) or _plan(descriptor)
    fields = plan.fields
    for name, value in data.items():
        spec = fields.get(name)
        if spec is None:
            return False
        kind, detail, repeated = spec
        # the commonest cases inline (a call holds dozens of fields), the rest in _value_fits
        if repeated:
            if type(value) is not list or not value:
                return False
            if kind == _MESSAGE:
                for item in value:
                    if not in_canonical_form(detail, item):
                        return False
            else:
                for item in value:
                    if not _value_fits(kind, detail, item):
                        return False
        elif kind == _MESSAGE:
            if not in_canonical_form(detail, value):
                return False
        elif kind == _STRING:
            if type(value) is not str or not (value.isascii() or valid_utf8(value)):
                return False
        elif kind == _DOUBLE:
            if type(value) is not float:
                if type(value) is not int or not -_EXACT_INTEGERS <= value <= _EXACT_INTEGERS:
                    return False
                data[name] = float(value)   # `"refuse_seconds": 1`: the conversion's one change, made here
        elif not _value_fits(kind, detail, value):
            return False
    if plan.required and not plan.required <= data.keys():
        return False
    return not plan.oneofs or all(len(group & data.keys()) < 2 for group in plan.oneofs)


def _value_fits(kind: int, detail: Any, value: Any) -> bool:
    if kind == _MESSAGE:
        return in_canonical_form(detail, value)
    if kind == _STRING:
        return type(value) is str and valid_utf8(value)
    if kind == _DOUBLE:
        return type(value) is float
    if kind == _INTEGER:
        return type(value) is int and detail[0] <= value <= detail[1]
    if kind == _ENUM:
        return type(value) is str and value in detail
    if kind == _BOOL:
        return type(value) is bool
    if kind == _BYTES:
        return type(value) is str and canonical_base64(value)
    return False


def valid_utf8(text: str) -> bool:
    """Whether protobuf can take `text` as a string (valid UTF-8: no lone surrogates)."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def canonical_base64(text: str) -> bool:
    """Whether `text` is base64 exactly as the dict form writes bytes (padded, nothing after the end)."""
    if not text.isascii():
        return False
    try:
        return base64.b64encode(base64.b64decode(text, validate=True)).decode() == text
    except (binascii.Error, ValueError):
        return False


def _plan(descriptor: Descriptor) -> _Plan:
    fields = {field.name: (*_kind(field), field.is_repeated) for field in descriptor.fields}
    plan = _Plan(fields, frozenset(f.name for f in descriptor.fields if f.is_required),
                 tuple(frozenset(f.name for f in oneof.fields) for oneof in descriptor.oneofs))
    _PLANS[descriptor] = plan
    return plan


def _kind(field: FieldDescriptor) -> tuple[int, Any]:
    kind = field.type
    if kind == FieldDescriptor.TYPE_MESSAGE:
        if field.message_type.GetOptions().map_entry:
            return _NEVER, None   # maps: rare in calls; the full conversion takes them
        return _MESSAGE, field.message_type
    if kind == FieldDescriptor.TYPE_STRING:
        return _STRING, None
    if kind == FieldDescriptor.TYPE_BYTES:
        return _BYTES, None
    if kind == FieldDescriptor.TYPE_BOOL:
        return _BOOL, None
    if kind == FieldDescriptor.TYPE_DOUBLE:
        return _DOUBLE, None
    if kind in _INTEGER_RANGES:
        return _INTEGER, _INTEGER_RANGES[kind]
    if kind == FieldDescriptor.TYPE_ENUM:
        return _ENUM, frozenset(field.enum_type.values_by_name)
    return _NEVER, None   # 32-bit floats (a double rounds on the way) and groups
