#!/usr/bin/env python3
"""Validates protocol lines against docs/protocol.schema.json (standard library only).

A JSON Schema validator for the subset the schema uses (type, const, enum, properties, required,
additionalProperties, items, minimum, maximum, minLength, maxLength, pattern, anyOf, oneOf, $ref), so the
tests need no package from outside.

    schema_check.py daemon FILE...     every line must be a reply or an event the daemon may send
    schema_check.py client FILE...     every line must be a request or a carousel line
Exits 1 and names each line that fails, with why.

A daemon FILE may be the daemon's protocol trace (CUED_PROTOCOL_LOG): lines `SERIAL > LINE` (what
connection SERIAL sent) and `SERIAL < LINE` (what the daemon sent it). Then each success reply is
checked against its own request's reply schema (`$defs/replies/OP`, found by the connection and the
id), not merely against some reply: a `sound.play` reply with a field only `play` has is refused.
"""
import json
import os
import re
import sys

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "protocol.schema.json")
SCHEMA = json.load(open(SCHEMA_PATH))

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    # JSON has one number type: an integer is a number whose value is integral (1.0 counts).
    "integer": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer(),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def resolve(ref):
    node = SCHEMA
    for part in ref.lstrip("#/").split("/"):
        node = node[part]
    return node


def errors(value, schema, path="$"):
    """Every way `value` fails `schema` (empty when it is valid)."""
    if "$ref" in schema:
        found = errors(value, resolve(schema["$ref"]), path)
        if found:
            return found
    if "type" in schema and not TYPES[schema["type"]](value):
        return ["%s: %r is not a %s" % (path, value, schema["type"])]
    if "const" in schema and (value != schema["const"] or isinstance(value, bool) != isinstance(schema["const"], bool)):
        return ["%s: %r is not %r" % (path, value, schema["const"])]
    if "enum" in schema and value not in schema["enum"]:
        return ["%s: %r is not one of %s" % (path, value, ", ".join(map(str, schema["enum"])))]
    found = []
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # Compared as a JSON number is read, a double: 9007199254740993 is 2^53 to the daemon too.
        if "minimum" in schema and float(value) < schema["minimum"]:
            found.append("%s: %r is below %r" % (path, value, schema["minimum"]))
        if "maximum" in schema and float(value) > schema["maximum"]:
            found.append("%s: %r is above %r" % (path, value, schema["maximum"]))
    if isinstance(value, str):
        if len(value.encode()) > schema.get("maxLength", float("inf")) or len(value) < schema.get("minLength", 0):
            found.append("%s: %r has the wrong length" % (path, value[:40]))
        if "pattern" in schema and not re.search(schema["pattern"], value):
            found.append("%s: %r does not match %s" % (path, value[:40], schema["pattern"]))
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                found.append("%s: no %r" % (path, key))
        for key, member in value.items():
            if key in properties:
                found += errors(member, properties[key], "%s.%s" % (path, key))
            elif schema.get("additionalProperties") is False:
                found.append("%s: unknown field %r" % (path, key))
            elif isinstance(schema.get("additionalProperties"), dict):
                found += errors(member, schema["additionalProperties"], "%s.%s" % (path, key))
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            found += errors(item, schema["items"], "%s[%d]" % (path, index))
    for keyword in ("anyOf", "oneOf"):
        if keyword in schema:
            matching = [s for s in schema[keyword] if not errors(value, s, path)]
            if not matching:
                # The closest alternative's reasons: the one with the fewest errors.
                found += min((errors(value, s, path) for s in schema[keyword]), key=len)
            elif keyword == "oneOf" and len(matching) > 1:
                found.append("%s: matches %d alternatives of a oneOf" % (path, len(matching)))
    return found


# The ops whose reply has another op's shape: every `player.*` op but create, play and destroy
# answers with the player's properties.
REPLY_OF = {"player.prepare": "player", "player.pause": "player", "player.stop": "player",
            "player.get": "player", "player.set": "player"}


def reply_schema(op):
    """The name of `op`'s reply schema in `$defs/replies` (`carousel` for a carousel line's reply)."""
    return REPLY_OF.get(op, op)


def validate(message, side, op=None):
    """Why `message` (a parsed line) is not a valid line from `side` ("daemon" or "client"), or [].

    `op`: for a daemon line, the op of the request it answers, when known; a success reply is then
    held to that op's reply schema."""
    definition = SCHEMA["$defs"]["daemonLine" if side == "daemon" else "clientLine"]
    if side == "daemon" and isinstance(message, dict):
        # Name the alternative that applies, so the reasons are the right ones.
        if "event" in message and message["event"] in SCHEMA["$defs"]["events"]:
            definition = {"$ref": "#/$defs/events/" + message["event"]}
        elif message.get("ok") is False:
            definition = {"$ref": "#/$defs/errorReply"}
        elif message.get("ok") is True and op is not None:
            if reply_schema(op) not in SCHEMA["$defs"]["replies"]:
                return ["$: a reply to %r, an op the schema has no reply for" % op]
            definition = {"$ref": "#/$defs/replies/" + reply_schema(op)}
    if side == "client" and isinstance(message, dict) and message.get("op") in SCHEMA["$defs"]["requests"]:
        definition = {"$ref": "#/$defs/requests/" + message["op"]}
    return errors(message, definition)


def validate_lines(lines, side):
    """[(line, reasons)] for every line that fails."""
    failures = []
    for line in lines:
        message = json.loads(line) if isinstance(line, (str, bytes)) else line
        reasons = validate(message, side)
        if reasons:
            failures.append((line, reasons))
    return failures


TRACED = re.compile(rb"^(\d+) ([<>]) (.*)$", re.S)


def request_op(line):
    """The op a client line asks for (`carousel` for a carousel line), and its id; None if neither."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):  # what a hostile client sends: not JSON, or nested past the parser
        return None
    if not isinstance(message, dict) or "id" not in message:
        return None
    op = message.get("op") if isinstance(message.get("op"), str) else "carousel" if "carousel" in message else None
    return (op, json.dumps(message["id"], sort_keys=True)) if op else None


def validate_trace(raw_lines):
    """[(line, reasons)] for every daemon line of a protocol trace (or of plain daemon lines) that fails.

    A success reply is checked against the reply schema of the request with its id on its
    connection; the oldest such request not yet answered, as ids may be reused."""
    failures, waiting, count = [], {}, 0
    for raw in raw_lines:
        traced = TRACED.match(raw)
        serial, direction, body = traced.groups() if traced else (b"", b"<", raw)
        if direction == b">":
            found = request_op(body)
            if found:
                waiting.setdefault((serial, found[1]), []).append(found[0])
            continue
        count += 1
        line = body.decode()
        message = json.loads(line)
        op = None
        if isinstance(message, dict) and "ok" in message and "id" in message:
            pending = waiting.get((serial, json.dumps(message["id"], sort_keys=True)))
            op = pending.pop(0) if pending else None
        reasons = validate(message, "daemon", op)
        if reasons:
            failures.append(((serial.decode() + " " if serial else "") + (op + " reply: " if op else "") + line, reasons))
    return count, failures


if __name__ == "__main__":
    side, paths = sys.argv[1], sys.argv[2:]
    # Lines end at "\n" only, as the protocol frames them (a "\r" inside a line is JSON whitespace).
    raw = [line for path in paths for line in open(path, "rb").read().split(b"\n") if line.strip()]
    if side == "daemon":
        count, failures = validate_trace(raw)
        lines = range(count)
    else:
        lines = [line.decode() for line in raw]
        failures = validate_lines(lines, side)
    for line, reasons in failures:
        print("INVALID %s\n  %s" % (line.strip()[:300], "\n  ".join(reasons[:5])))
    print("%d lines, %d invalid" % (len(lines), len(failures)))
    sys.exit(1 if failures else 0)
