"""Reading the daemon's JSON objects into typed values, and writing request lines."""
from __future__ import annotations

import json
import math
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, cast

from .errors import ProtocolViolation

JSONObject = Dict[str, Any]


def encode_line(message: Mapping[str, Any]) -> bytes:
    """One request line: compact JSON, UTF-8, a line feed. NaN and infinities are refused (the
    protocol has none), and so is a field of a type JSON has not."""
    for key, value in message.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError("%r is %r; cued takes finite numbers only" % (key, value))
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8") + b"\n"


def decode_line(line: bytes) -> JSONObject:
    """One line from the daemon as an object."""
    try:
        value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise ProtocolViolation("cued sent a line that is not JSON (%s): %r" % (error, line[:200])) from None
    if not isinstance(value, dict):
        raise ProtocolViolation("cued sent a line that is not a JSON object: %r" % (line[:200],))
    return value


def _missing(obj: Mapping[str, Any], key: str, kind: str) -> ProtocolViolation:
    return ProtocolViolation("expected %s %r in %r" % (kind, key, dict(obj)))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


#: What each type accepts (JSON numbers with an integral value are integers: 1.0 is 1).
_INTEGER: Tuple[str, Callable[[Any], bool]] = ("an integer", lambda value: _is_number(value) and value == int(value))
_NUMBER: Tuple[str, Callable[[Any], bool]] = ("a number", _is_number)
_STRING: Tuple[str, Callable[[Any], bool]] = ("a string", lambda value: isinstance(value, str))
_BOOLEAN: Tuple[str, Callable[[Any], bool]] = ("a boolean", lambda value: isinstance(value, bool))


def _value(obj: Mapping[str, Any], key: str, rule: Tuple[str, Callable[[Any], bool]], required: bool) -> Any:
    """The field `key` if it is of the rule's type; None when absent (an error when `required`)."""
    kind, accepts = rule
    value = obj.get(key)
    if value is None and not required:
        return None
    if value is None or not accepts(value):
        raise _missing(obj, key, kind)
    return value


def opt_int(obj: Mapping[str, Any], key: str) -> Optional[int]:
    value = _value(obj, key, _INTEGER, False)
    return None if value is None else int(value)


def req_int(obj: Mapping[str, Any], key: str) -> int:
    return int(_value(obj, key, _INTEGER, True))


def opt_float(obj: Mapping[str, Any], key: str) -> Optional[float]:
    value = _value(obj, key, _NUMBER, False)
    return None if value is None else float(value)


def req_float(obj: Mapping[str, Any], key: str) -> float:
    return float(_value(obj, key, _NUMBER, True))


def opt_str(obj: Mapping[str, Any], key: str) -> Optional[str]:
    return cast(Optional[str], _value(obj, key, _STRING, False))


def req_str(obj: Mapping[str, Any], key: str) -> str:
    return cast(str, _value(obj, key, _STRING, True))


def opt_bool(obj: Mapping[str, Any], key: str) -> Optional[bool]:
    return cast(Optional[bool], _value(obj, key, _BOOLEAN, False))


def req_bool(obj: Mapping[str, Any], key: str) -> bool:
    return cast(bool, _value(obj, key, _BOOLEAN, True))


def str_list(obj: Mapping[str, Any], key: str) -> List[str]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _missing(obj, key, "an array of strings")
    return list(value)


def float_list(obj: Mapping[str, Any], key: str) -> Optional[List[float]]:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(_is_number(v) for v in value):
        raise _missing(obj, key, "an array of numbers")
    return [float(v) for v in value]


def object_list(obj: Mapping[str, Any], key: str) -> List[JSONObject]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise _missing(obj, key, "an array of objects")
    return list(value)


def req_object(obj: Mapping[str, Any], key: str) -> JSONObject:
    value = obj.get(key)
    if not isinstance(value, dict):
        raise _missing(obj, key, "an object")
    return value


def fields(**values: Any) -> JSONObject:
    """Request fields without the ones left out (None): the daemon reads a null as absent, but the
    schema describes the strict form, which omits them."""
    return {key: value for key, value in values.items() if value is not None}
