"""Bodies of the Mesos v1 HTTP APIs in JSON or protobuf, sans I/O.

Why one module: Mesos clients choose their wire format (mesos-go speaks
protobuf by default, pymesos JSON), but the master and agents should handle
one form only. That form is the dict shaped like Mesos's JSON, the one the
master already handles: field names as in the .proto files, enums as their
names, `bytes` as base64 text, 64-bit integers as Python ints, only the
fields that are set. `decode_call` gives that dict for either format;
`encode_event` / `encode_response` turn such a dict into either format.
RecordIO framing of streams stays in `mesos/recordio.py`.

The conversion follows what Apache Mesos does (its JSON <-> protobuf code,
measured against a real 1.12 master):
- JSON in: nesting deeper than MAX_JSON_DEPTH is refused (ours: Mesos
  has no such limit), unknown fields are ignored, `null` means unset, numbers and
  booleans may come as strings, doubles may be "Infinity"/"-Infinity", an
  unknown enum name leaves an optional field unset (a required one is an
  error), and a message missing a required field is refused.
- JSON out (Mesos's writer): set fields plus every optional, non-deprecated
  field that has an explicit default (`to_dict(..., defaults=True)`); int64
  as numbers, not strings as google.protobuf.json_format writes them.
- protobuf in: the binary encoding; a message missing a required field is
  refused, as the C++ parser does.
- Content-Type must be exactly one of the two media types (Mesos compares
  the whole header, parameters included); Accept is matched as Mesos's
  libprocess does (JSON first, q=0 refuses, no header accepts all).

Errors are `CodecError` with the HTTP status and Mesos's message.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message

from . import compact_json
from .canonical_form import canonical_base64, in_canonical_form, valid_utf8
from .proto import agent_pb2, executor_pb2, master_pb2, scheduler_pb2

JsonDict = dict[str, Any]


class MediaType(StrEnum):
    """The two bodies Mesos's v1 APIs speak."""

    JSON = "application/json"
    PROTOBUF = "application/x-protobuf"


class CodecError(ValueError):
    """A body or header Mesos would refuse: `status` is the HTTP answer, `message` Mesos's text."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Api:
    """The message classes of one Mesos v1 HTTP API (None where the API has no such message)."""

    name: str
    call: type[Message]
    event: type[Message] | None
    response: type[Message] | None


SCHEDULER = Api("scheduler", scheduler_pb2.Call, scheduler_pb2.Event, scheduler_pb2.Response)
EXECUTOR = Api("executor", executor_pb2.Call, executor_pb2.Event, None)
MASTER_OPERATOR = Api("master operator", master_pb2.Call, master_pb2.Event, master_pb2.Response)
AGENT_OPERATOR = Api("agent operator", agent_pb2.Call, None, agent_pb2.Response)


# ---- media types ------------------------------------------------------------

def request_media_type(content_type: str | None) -> MediaType:
    """The format of a request body from its Content-Type, refused as Mesos refuses it."""
    if content_type is None:
        raise CodecError(400, "Expecting 'Content-Type' to be present")
    try:
        return MediaType(content_type)
    except ValueError:
        raise CodecError(415, f"Expecting 'Content-Type' of {MediaType.JSON} or {MediaType.PROTOBUF}") from None


def accepts(accept: str | None, media_type: str) -> bool:
    """Whether an Accept header allows `media_type` (exact, then `type/*`, then `*/*`; q=0 refuses)."""
    if accept is None:
        return True
    header = accept.replace(" ", "").replace("\t", "").replace("\n", "")
    main = media_type.split("/")[0]
    for candidate in (media_type, f"{main}/*", "*/*"):
        for item in filter(None, header.split(",")):
            tokens = [t for t in item.split(";") if t]
            if not tokens or tokens[0].lower() != candidate.lower():
                continue
            q_values = [t.split("=", 1)[1] for t in tokens[1:] if t.startswith("q=")]
            if len(q_values) != 1:
                return True
            try:
                return float(q_values[0]) > 0
            except ValueError:
                return False
    return False


def response_media_type(accept: str | None) -> MediaType:
    """The format to answer in: JSON when acceptable, else protobuf, else 406 as Mesos says."""
    for media_type in (MediaType.JSON, MediaType.PROTOBUF):
        if accepts(accept, media_type):
            return media_type
    raise CodecError(406, f"Expecting 'Accept' to allow '{MediaType.PROTOBUF}' or '{MediaType.JSON}'")


# ---- bodies -----------------------------------------------------------------

def decode_call(api: Api, body: bytes, media_type: MediaType) -> JsonDict:
    """A Call body in either format as the dict form; CodecError(400) with Mesos's message if invalid.

    A JSON body goes through the Call message too, so both formats give the
    same dict, with every field of the type its .proto says: a wrongly typed
    field is refused here, not in a handler.
    """
    return decode_call_noting_finite(api, body, media_type)[0]


def decode_call_noting_finite(api: Api, body: bytes, media_type: MediaType) -> tuple[JsonDict, bool]:
    """`decode_call`'s dict, and whether its every number is known to be finite.

    Known only for JSON that orjson parsed and that the protobuf message
    would keep as it is (compact_json.loads_as_json_noting_finite): what the
    message converts (a 32-bit float, say) or a protobuf body may hold an
    infinity, so the validation's walk looks for one there (issue 17: the
    quick lane skips that walk for nearly every call).
    """
    if media_type is MediaType.PROTOBUF:
        message = api.call()
        try:
            message.ParseFromString(body)
        except DecodeError:
            raise CodecError(400, "Failed to parse body into Call protobuf") from None
        if not message.IsInitialized():
            raise CodecError(400, "Failed to parse body into Call protobuf")
        return to_dict(message), False
    try:
        data, finite = compact_json.loads_as_json_noting_finite(body, _refuse_constant)
    except RecursionError:
        raise CodecError(400, f"Failed to parse body into JSON: nested deeper than {MAX_JSON_DEPTH} "
                              "levels") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise CodecError(400, f"Failed to parse body into JSON: {exc}") from None
    if api is SCHEDULER and _plain_acknowledge(data):
        return data, finite   # what the conversion below would give, at a tenth of its cost (issue 17)
    # JSON nests no deeper than it has openers: a body with few of them needs no walk
    if _openers(body) > MAX_JSON_DEPTH and json_depth(data) > MAX_JSON_DEPTH:
        raise CodecError(400, f"Failed to parse body into JSON: nested deeper than {MAX_JSON_DEPTH} levels")
    if in_canonical_form(api.call.DESCRIPTOR, data):
        return data, finite   # the conversion below would give it back unchanged (canonical_form.py, issue 17)
    try:
        call = to_dict(message_from_dict(api.call, data))
        if call != data:
            # Something was converted or dropped (or protobuf's constructor took a number for an
            # enum): redo it field by field, so the result and any error are Mesos's.
            call = to_dict(from_dict(api.call(), data))
    except ValueError as exc:
        raise CodecError(400, f"Failed to convert JSON into Call protobuf: {exc}") from None
    return call, False


_ACKNOWLEDGE_KEYS = frozenset({"type", "framework_id", "acknowledge"})
_ACKNOWLEDGE_BODY_KEYS = frozenset({"agent_id", "task_id", "uuid"})


def _plain_acknowledge(data: Any) -> bool:
    """Whether `data` is an ACKNOWLEDGE exactly as frameworks send it, which the Call message keeps as is.

    Why: three of the calls of every task are ACKNOWLEDGEs, and the trip
    through the protobuf message costs the master about 25 us each. A call
    passes only with exactly these fields, ids `{"value": <str>}`, and a
    uuid in canonical base64 (the form `to_dict` writes bytes in); anything
    else takes the full conversion.
    """
    if type(data) is not dict or data.keys() != _ACKNOWLEDGE_KEYS or data["type"] != "ACKNOWLEDGE":
        return False
    body = data["acknowledge"]
    if type(body) is not dict or body.keys() != _ACKNOWLEDGE_BODY_KEYS:
        return False
    uid = body["uuid"]
    if type(uid) is not str or not canonical_base64(uid):
        return False
    return all(_plain_id(x) for x in (data["framework_id"], body["agent_id"], body["task_id"]))


def _plain_id(data: Any) -> bool:
    """`{"value": <str>}` with a string protobuf takes as it is (valid UTF-8: no lone surrogates)."""
    if type(data) is not dict or len(data) != 1 or type(data.get("value")) is not str:
        return False
    return valid_utf8(data["value"])


# The deepest JSON a call may nest (objects and arrays). The deepest real call, a LAUNCH_GROUP's
# container with its port mappings, nests about 12; Python's parser itself gives up near 1,000 (a
# RecursionError, answered the same way). Bounding it keeps every walk over a call cheap and shallow.
MAX_JSON_DEPTH = 64


def _openers(body: bytes | str) -> int:
    """How many `{` and `[` a body holds (inside strings too): a bound on how deeply it can nest."""
    if isinstance(body, str):
        return body.count("{") + body.count("[")
    return body.count(b"{") + body.count(b"[")


def json_depth(data: Any) -> int:
    """How deeply objects and arrays nest in parsed JSON (a scalar: 0). Iterative: any input is safe."""
    deepest = 0
    pending: list[tuple[Any, int]] = [(data, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        pending.extend((child, depth + 1) for child in children)
    return deepest


def encode_event(api: Api, event: JsonDict, media_type: MediaType, *, as_mesos: bool = False) -> bytes:
    """One Event of `api` (dict form) as a record body; frame it with recordio.encode.

    `as_mesos=True` writes JSON as Mesos's writer does (see `encode_as_mesos`);
    the default writes the dict as it is, which costs no more than json.dumps
    (the scheduler API's events: issue 17's budget).
    """
    if api.event is None:
        raise ValueError(f"the {api.name} API has no events")
    return encode_as_mesos(api.event, event, media_type) if as_mesos else _encode(api.event, event, media_type)


def encode_response(api: Api, response: JsonDict, media_type: MediaType, *, as_mesos: bool = False) -> bytes:
    """One Response of `api` (dict form) as an HTTP body (`as_mesos` as for encode_event)."""
    if api.response is None:
        raise ValueError(f"the {api.name} API has no responses")
    if as_mesos:
        return encode_as_mesos(api.response, response, media_type)
    return _encode(api.response, response, media_type)


def _encode(cls: type[Message], data: JsonDict, media_type: MediaType) -> bytes:
    if media_type is MediaType.JSON:
        return compact_json.dumps(data)
    return message_from_dict(cls, data).SerializeToString()


def encode_as_mesos(cls: type[Message], data: JsonDict, media_type: MediaType) -> bytes:
    """`data` through the `cls` message, written as Mesos writes it.

    JSON gets every field with a default (`to_dict(defaults=True)`) and keeps
    what `data` spells out that the message cannot hold: Mesos's hand-written
    operator writers put some repeated fields even when empty (GetTasks.tasks,
    ...), and AgentInfo's v0 `checkpoint`; the views that build `data` write
    exactly those. Protobuf is the message's bytes, where neither shows.
    """
    message = message_from_dict(cls, data)
    if media_type is MediaType.PROTOBUF:
        return message.SerializeToString()
    out = to_dict(message, defaults=True)
    _keep_from_source(data, out)
    return json.dumps(out, separators=(",", ":")).encode()


def _keep_from_source(source: Any, out: Any) -> None:
    """Put back into `out` the keys of `source` the message dropped (empty lists, fields it lacks)."""
    if isinstance(source, dict) and isinstance(out, dict):
        for key, value in source.items():
            if key not in out:
                out[key] = value
            else:
                _keep_from_source(value, out[key])
    elif isinstance(source, list) and isinstance(out, list) and len(source) == len(out):
        for a, b in zip(source, out):
            _keep_from_source(a, b)


def message_from_dict(cls: type[Message], data: Any) -> Message:
    """A new `cls` message from the dict form, by Mesos's JSON rules; ValueError naming the field.

    Fast path: protobuf's own constructor (C code) takes the dict once its
    base64 `bytes` fields are decoded. It refuses everything irregular
    (strings for numbers, nulls in lists, unknown names, bad base64), and then
    `from_dict` does the conversion field by field with Mesos's rules and
    messages. Where the constructor is laxer than Mesos (a number for an enum
    or a bool, a bool for a double) the value still lands typed in the message;
    `decode_call` catches the enum case by comparing the result with its input.
    """
    if isinstance(data, dict):
        try:
            message = cls(**_decode_bytes(cls.DESCRIPTOR, data))
        except (TypeError, ValueError, OverflowError):
            pass
        else:
            if message.IsInitialized():
                return message
            raise ValueError(f"Missing required fields: {', '.join(message.FindInitializationErrors())}")
    return from_dict(cls(), data)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"'{name}' is not JSON")


# ---- protobuf message -> dict -------------------------------------------------

def to_dict(message: Message, *, defaults: bool = False) -> JsonDict:
    """A message in the dict form. `defaults=True` adds what Mesos's JSON writer adds: unset
    optional, non-deprecated fields with an explicit default."""
    return _to_dict(message, defaults)


def _to_dict(message: Message, defaults: bool) -> JsonDict:
    out: JsonDict = {}
    readers = _READERS
    for field, value in message.ListFields():
        entry = readers.get(field)
        if entry is None:
            entry = readers[field] = (field.name, _make_reader(field))
        name, reader = entry
        out[name] = value if reader is None else reader(value, defaults)
    if defaults:
        for field in _defaulted_fields(message.DESCRIPTOR):
            if field.name not in out:
                out[field.name] = _default_value(field)
    return out


# Per field: its name and the converter of its value (None: the value is already in dict form).
# Built on first use; ListFields yields the same descriptor objects every time.
_READERS: dict[FieldDescriptor, tuple[str, Callable[[Any, bool], Any] | None]] = {}
_DEFAULTED: dict[Descriptor, tuple[FieldDescriptor, ...]] = {}


def _make_reader(field: FieldDescriptor) -> Callable[[Any, bool], Any] | None:
    if _is_map(field):
        value_field = field.message_type.fields_by_name["value"]
        one = _single_reader(value_field)
        if one is None:
            return lambda value, defaults: dict(value)
        return lambda value, defaults: {key: one(item, defaults) for key, item in value.items()}
    one = _single_reader(field)
    if field.is_repeated:
        if one is None:
            return lambda value, defaults: list(value)
        return lambda value, defaults: [one(item, defaults) for item in value]
    return one


def _single_reader(field: FieldDescriptor) -> Callable[[Any, bool], Any] | None:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return _to_dict
    if field.type == FieldDescriptor.TYPE_ENUM:
        names = {v.number: v.name for v in field.enum_type.values}
        return lambda value, defaults: names.get(value, value)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return lambda value, defaults: base64.b64encode(value).decode()
    return None


def _defaulted_fields(descriptor: Descriptor) -> tuple[FieldDescriptor, ...]:
    fields = _DEFAULTED.get(descriptor)
    if fields is None:
        fields = _DEFAULTED[descriptor] = tuple(
            f for f in descriptor.fields
            if not f.is_repeated and f.has_default_value and not f.GetOptions().deprecated)
    return fields


def _default_value(field: FieldDescriptor) -> Any:
    if field.type == FieldDescriptor.TYPE_ENUM:
        return field.enum_type.values_by_number[field.default_value].name
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(field.default_value).decode()
    return field.default_value


def _is_map(field: FieldDescriptor) -> bool:
    return field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry


# ---- dict -> protobuf message -------------------------------------------------

def _decode_bytes(descriptor: Descriptor, data: JsonDict) -> JsonDict:
    """`data` with the base64 text of every `bytes` field decoded (copied only where changed).

    Only keys whose field is `bytes`, or leads to a message that holds one,
    are visited; a value that is not what the field needs is left for the
    constructor to refuse.
    """
    fields = _bytes_routes(descriptor)
    if not fields:
        return data
    out: JsonDict | None = None
    for name, field in fields.items():
        value = data.get(name)
        if value is None:
            continue
        new = _decode_bytes_value(field, value)
        if new is not value:
            if out is None:
                out = dict(data)
            out[name] = new
    return data if out is None else out


def _decode_bytes_value(field: FieldDescriptor, value: Any) -> Any:
    if _is_map(field):
        value_field = field.message_type.fields_by_name["value"]
        if not isinstance(value, dict):
            return value
        return {key: _decode_bytes_one(value_field, item) for key, item in value.items()}
    if field.is_repeated:
        if not isinstance(value, list):
            return value
        return [_decode_bytes_one(field, item) for item in value]
    return _decode_bytes_one(field, value)


def _decode_bytes_one(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64decode(value, validate=True) if isinstance(value, str) else value
    return _decode_bytes(field.message_type, value) if isinstance(value, dict) else value


_BYTES_ROUTES: dict[Descriptor, dict[str, FieldDescriptor]] = {}


def _bytes_routes(descriptor: Descriptor) -> dict[str, FieldDescriptor]:
    """The fields of a message that are `bytes` or reach a `bytes` field (cached per message type)."""
    routes = _BYTES_ROUTES.get(descriptor)
    if routes is None:
        routes = _BYTES_ROUTES[descriptor] = {
            f.name: f for f in descriptor.fields if _reaches_bytes(f, set())}
    return routes


def _reaches_bytes(field: FieldDescriptor, seen: set[str]) -> bool:
    if field.type == FieldDescriptor.TYPE_BYTES:
        return True
    if field.type != FieldDescriptor.TYPE_MESSAGE or field.message_type.full_name in seen:
        return False
    seen.add(field.message_type.full_name)
    return any(_reaches_bytes(f, seen) for f in field.message_type.fields)


def from_dict(message: Message, data: Any, *, strict: bool = False) -> Message:
    """Fill `message` from the dict form (or JSON a client sent), by Mesos's JSON rules.

    Raises ValueError naming the field. `strict=True` also refuses field names
    the message does not have (Mesos ignores them): for tests of our shapes.
    """
    if not isinstance(data, dict):
        raise ValueError("Expecting a JSON object")
    _merge(message, data, strict)
    missing = message.FindInitializationErrors()
    if missing:
        raise ValueError(f"Missing required fields: {', '.join(missing)}")
    return message


def _merge(message: Message, data: JsonDict, strict: bool) -> None:
    fields = message.DESCRIPTOR.fields_by_name
    for name, value in data.items():
        field = fields.get(name)
        if field is None:
            if strict:
                raise ValueError(f"{message.DESCRIPTOR.full_name} has no field '{name}'")
            continue
        if value is None:
            continue
        if _is_map(field):
            _merge_map(getattr(message, name), field, value, strict)
        elif field.is_repeated:
            if not isinstance(value, list):
                raise ValueError(f"Not expecting a JSON {_kind(value)} for field '{name}'")
            _merge_repeated(getattr(message, name), field, value, strict)
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            if not isinstance(value, dict):
                raise ValueError(f"Not expecting a JSON {_kind(value)} for field '{name}'")
            child = getattr(message, name)
            child.SetInParent()
            _merge(child, value, strict)
        else:
            scalar = _scalar(field, value)
            if scalar is not _UNSET:
                _set(message, field, scalar)


def _merge_repeated(container: Any, field: FieldDescriptor, items: list[Any], strict: bool) -> None:
    for item in items:
        if item is None:
            continue
        if field.type == FieldDescriptor.TYPE_MESSAGE:
            if not isinstance(item, dict):
                raise ValueError(f"Not expecting a JSON {_kind(item)} for field '{field.name}'")
            _merge(container.add(), item, strict)
        else:
            scalar = _scalar(field, item)
            if scalar is not _UNSET:
                try:
                    container.append(scalar)
                except (TypeError, ValueError) as exc:
                    raise ValueError(f"Invalid value for field '{field.name}': {exc}") from None


def _merge_map(container: Any, field: FieldDescriptor, value: Any, strict: bool) -> None:
    if not isinstance(value, dict):
        raise ValueError(f"Not expecting a JSON {_kind(value)} for field '{field.name}'")
    value_field = field.message_type.fields_by_name["value"]
    for key, item in value.items():
        if item is None:
            continue
        if value_field.type == FieldDescriptor.TYPE_MESSAGE:
            if not isinstance(item, dict):
                raise ValueError(f"Not expecting a JSON {_kind(item)} for field 'value'")
            _merge(container[key], item, strict)
        else:
            scalar = _scalar(value_field, item)
            if scalar is not _UNSET:
                container[key] = scalar


def _set(message: Message, field: FieldDescriptor, value: Any) -> None:
    try:
        setattr(message, field.name, value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Invalid value for field '{field.name}': {exc}") from None


_UNSET = object()
_INTEGER_TYPES = frozenset({
    FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_UINT32,
    FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SINT64,
    FieldDescriptor.TYPE_FIXED32, FieldDescriptor.TYPE_FIXED64, FieldDescriptor.TYPE_SFIXED32,
    FieldDescriptor.TYPE_SFIXED64})
_FLOAT_TYPES = frozenset({FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT})


def _scalar(field: FieldDescriptor, value: Any) -> Any:
    """One JSON value for a non-message field, converted as Mesos converts it (_UNSET: leave unset)."""
    kind = field.type
    if kind == FieldDescriptor.TYPE_STRING:
        if isinstance(value, str):
            return value
    elif kind == FieldDescriptor.TYPE_BYTES:
        if isinstance(value, str):
            return _base64(field, value)
    elif kind == FieldDescriptor.TYPE_ENUM:
        if isinstance(value, str):
            # a name that is not valid UTF-8 (a lone surrogate) names no value; protobuf's lookup fails on it
            number = field.enum_type.values_by_name.get(value) if valid_utf8(value) else None
            if number is None:
                if field.is_required:
                    raise ValueError(f"Failed to find enum for '{value}'")
                return _UNSET
            return number.number
    elif kind == FieldDescriptor.TYPE_BOOL:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value in ("true", "false"):
            return value == "true"
    elif kind in _FLOAT_TYPES:
        return _float(field, value)
    elif kind in _INTEGER_TYPES:
        return _integer(field, value)
    raise ValueError(f"Not expecting a JSON {_kind(value)} for field '{field.name}'")


_BASE64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def _base64(field: FieldDescriptor, text: str) -> bytes:
    bad = next((c for c in text if c not in _BASE64_ALPHABET), None)
    if bad is not None:
        raise ValueError(f"Failed to base64 decode bytes field '{field.name}': Invalid character '{bad}'")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"Failed to base64 decode bytes field '{field.name}': {exc}") from None


def _float(field: FieldDescriptor, value: Any) -> float:
    if isinstance(value, str):
        if value in ("Infinity", "-Infinity"):
            return float(value)
        value = _number_in_string(field, value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"Not expecting a JSON {_kind(value)} for field '{field.name}'")
    try:
        return float(value)
    except OverflowError:   # an integer beyond a double: Mesos's parser reads it as a double, an infinity
        return math.inf if value > 0 else -math.inf


def _integer(field: FieldDescriptor, value: Any) -> int:
    if isinstance(value, str):
        value = _number_in_string(field, value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"Not expecting a JSON {_kind(value)} for field '{field.name}'")
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise ValueError(f"Expecting an integer for field '{field.name}', got {value}")
        value = int(value)
    return value


def _number_in_string(field: FieldDescriptor, text: str) -> int | float:
    try:
        number = json.loads(text, parse_constant=_refuse_constant)
    except ValueError:
        number = None
    if isinstance(number, bool) or not isinstance(number, int | float):
        raise ValueError(f"Failed to parse '{text}' as a JSON number for field '{field.name}'")
    return number


def _kind(value: Any) -> str:
    """JSON's name for a Python value's type, as Mesos's messages say it."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
