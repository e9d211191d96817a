"""Reading the daemon's JSON objects into typed values, and writing request lines."""
from __future__ import annotations

import json
import math
from typing import Any, Dict, List, Mapping, Optional

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


def opt_int(obj: Mapping[str, Any], key: str) -> Optional[int]:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise _missing(obj, key, "an integer")
    return int(value)


def req_int(obj: Mapping[str, Any], key: str) -> int:
    value = opt_int(obj, key)
    if value is None:
        raise _missing(obj, key, "an integer")
    return value


def opt_float(obj: Mapping[str, Any], key: str) -> Optional[float]:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _missing(obj, key, "a number")
    return float(value)


def req_float(obj: Mapping[str, Any], key: str) -> float:
    value = opt_float(obj, key)
    if value is None:
        raise _missing(obj, key, "a number")
    return value


def opt_str(obj: Mapping[str, Any], key: str) -> Optional[str]:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _missing(obj, key, "a string")
    return value


def req_str(obj: Mapping[str, Any], key: str) -> str:
    value = opt_str(obj, key)
    if value is None:
        raise _missing(obj, key, "a string")
    return value


def opt_bool(obj: Mapping[str, Any], key: str) -> Optional[bool]:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise _missing(obj, key, "a boolean")
    return value


def req_bool(obj: Mapping[str, Any], key: str) -> bool:
    value = opt_bool(obj, key)
    if value is None:
        raise _missing(obj, key, "a boolean")
    return value


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
    if not isinstance(value, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
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
