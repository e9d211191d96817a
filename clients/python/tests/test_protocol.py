"""The package held to the protocol: every op a real cued lists in `hello` has a method, synchronous
and asyncio; each op's methods send the request fields docs/protocol.schema.json declares for it,
every one, with parameter types that match the schema's, and none it lacks; every error code and
every reason the schema enumerates is known to the package. A new op, field, code or reason fails
here until the package follows.

What a method sends is read from the request it builds, not from its name: a generated method
unwraps (`__wrapped__`) to its op's request builder in `cued._ops`, and a method written by hand
names its builder with `_ops.sends`. Each builder is called with sample arguments, and the field
each parameter changes is its wire name."""
from __future__ import annotations

import collections.abc
import inspect
import json
import os
import typing
import unittest
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Set, Tuple

import cued
from cued import _ops, carousel, events
from support import REPOSITORY, Daemon

SCHEMA_PATH = os.path.join(REPOSITORY, "docs", "protocol.schema.json")

#: The classes whose methods send ops, synchronous and asyncio side by side.
SURFACES: Tuple[Tuple[type, type], ...] = (
    (cued.Client, cued.AsyncClient), (cued.Player, cued.AsyncPlayer), (cued.SystemSound, cued.AsyncSystemSound))

#: The JSON type each Python annotation stands for.
JSON_TYPES: Dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def load_schema() -> Dict[str, Any]:
    with open(SCHEMA_PATH) as file:
        schema: Dict[str, Any] = json.load(file)
    return schema


def hello_ops() -> List[str]:
    """The ops a real cued of this build lists in `hello`."""
    daemon = Daemon()
    try:
        with cued.Client(daemon.socket, name="protocol-test") as client:
            server = client.server
            assert server is not None and server.capabilities is not None, "hello has no capabilities"
            return list(server.capabilities.ops)
    finally:
        daemon.stop()


# --- types: the schema's and the annotations' -----------------------------------------------------


def resolved(declared: Mapping[str, Any]) -> Mapping[str, Any]:
    """A property's declaration, through its `$ref` (`#/$defs/NAME`) when it has one."""
    while isinstance(declared.get("$ref"), str) and declared["$ref"].startswith("#/"):
        node: Any = load_schema()
        for part in declared["$ref"][2:].split("/"):
            node = node[part]
        declared = node
    return declared


def schema_type(declared: Mapping[str, Any]) -> str:
    """A property's JSON type: its `type`, or for an `enum` or `const` without one, its values'."""
    declared = resolved(declared)
    if isinstance(declared.get("type"), str):
        return str(declared["type"])
    values = declared.get("enum", [declared["const"]] if "const" in declared else [])
    kinds = {json_type_of(value) for value in values}
    return kinds.pop() if len(kinds) == 1 else "unknown"


def json_type_of(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def annotation_type(annotation: Any) -> Tuple[str, Optional[str], bool]:
    """(JSON type, JSON type of its items for an array, whether None is allowed)."""
    optional = False
    if typing.get_origin(annotation) is typing.Union:
        arguments = [argument for argument in typing.get_args(annotation) if argument is not type(None)]
        optional = len(arguments) < len(typing.get_args(annotation))
        if len(arguments) != 1:
            return "union of %s" % arguments, None, optional
        annotation = arguments[0]
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        kinds = {json_type_of(value) for value in typing.get_args(annotation)}
        return (kinds.pop() if len(kinds) == 1 else "mixed literal"), None, optional
    if origin in (list, tuple, collections.abc.Sequence):
        items = typing.get_args(annotation)
        return "array", (annotation_type(items[0])[0] if items else None), optional
    return JSON_TYPES.get(annotation, repr(annotation)), None, optional


def samples(annotation: Any) -> Tuple[Any, Any]:
    """Two different values of the annotation's type."""
    kind, items, _ = annotation_type(annotation)
    if typing.get_origin(annotation) is typing.Union:
        annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
    if typing.get_origin(annotation) is typing.Literal:
        values = typing.get_args(annotation)
        return values[0], values[-1]
    pairs: Dict[str, Tuple[Any, Any]] = {
        "string": ("a", "b"), "integer": (1, 2), "number": (0.25, 0.5), "boolean": (True, False)}
    if kind == "array":
        first, second = pairs.get(items or "", (None, None))
        return [first], [second]
    if kind not in pairs:
        raise AssertionError("no sample value for the annotation %r" % (annotation,))
    return pairs[kind]


# --- what a method sends ----------------------------------------------------------------------------


def builder_of(method: Any) -> Optional[Callable[..., Any]]:
    """The request builder whose request a method sends: the one `_ops.sends` names, or the one a
    generated method wraps. None for a method that sends no op of its own."""
    named = getattr(method, "sends", None)
    if named is not None:
        return typing.cast(Callable[..., Any], named)
    inner = inspect.unwrap(method)
    if inner is not method and getattr(inner, "__module__", "") == _ops.__name__:
        return typing.cast(Callable[..., Any], inner)
    return None


class Builder:
    """A request builder of `cued._ops` and what each of its parameters sends."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.name = function.__name__
        self.hints = typing.get_type_hints(function)
        self.parameters = [p for p in inspect.signature(function).parameters.values()
                           if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        self.required = {p.name: samples(self.hints[p.name])[0] for p in self.parameters if p.default is p.empty}
        self.op: str = self.build({}).op

    def build(self, values: Mapping[str, Any]) -> Any:
        return self.function(**{**self.required, **values})

    def wire_names(self) -> Iterator[Tuple[inspect.Parameter, Set[str], List[Dict[str, Any]]]]:
        """Each parameter, the fields that change with it, and the requests it was seen in."""
        for parameter in self.parameters:
            first, second = samples(self.hints[parameter.name])
            built = [self.build({}).fields, self.build({parameter.name: first}).fields,
                     self.build({parameter.name: second}).fields]
            keys = {key for fields in built for key in fields}
            changed = {key for key in keys if len({json.dumps(fields.get(key)) for fields in built}) > 1}
            yield parameter, changed, built


def sending_methods() -> Iterator[Tuple[type, str, Builder]]:
    """Every method of the surface classes that sends an op: its class, its name, its builder
    (`request`, for any op by name, aside)."""
    for pair in SURFACES:
        for surface in pair:
            for name, method in inspect.getmembers(surface, callable):
                builder = builder_of(method)
                if builder is not None and not name.startswith("_") and name != "request":
                    yield surface, name, Builder(builder)


def enums_named(node: Any, names: Set[str], path: str = "") -> Iterator[Tuple[str, List[Any]]]:
    """Every enumeration of a property called one of `names`, anywhere in the schema, by its path."""
    if isinstance(node, dict):
        for key, value in node.items():
            where = path + "/" + key
            if key in names and isinstance(value, dict) and isinstance(resolved(value).get("enum"), list):
                yield where, list(resolved(value)["enum"])
            yield from enums_named(value, names, where)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from enums_named(value, names, "%s/%d" % (path, index))


class ProtocolTests(unittest.TestCase):
    maxDiff = None
    schema: Dict[str, Any]
    ops: List[str]

    @classmethod
    def setUpClass(cls) -> None:
        cls.schema = load_schema()
        cls.ops = hello_ops()

    @property
    def requests(self) -> Dict[str, Any]:
        requests: Dict[str, Any] = self.schema["$defs"]["requests"]
        return requests

    def test_hello_lists_ops_and_the_schema_declares_each(self) -> None:
        self.assertGreaterEqual(len(self.ops), 20, "hello lists the ops: %s" % self.ops)
        self.assertEqual([op for op in self.ops if op not in self.requests], [],
                         "ops hello lists that %s does not declare" % SCHEMA_PATH)

    def test_every_op_hello_lists_has_a_method_synchronous_and_asyncio(self) -> None:
        found: Dict[str, Dict[type, List[str]]] = {}
        for surface, name, builder in sending_methods():
            found.setdefault(builder.op, {}).setdefault(surface, []).append(name)
        self.assertEqual([op for op in self.ops if op not in found], [],
                         "ops hello lists that no method of %s sends" % ", ".join(
                             "%s/%s" % (sync.__name__, asynchronous.__name__) for sync, asynchronous in SURFACES))
        for op in self.ops:
            where = found[op]
            with self.subTest(op=op):
                self.assertTrue(any(sync in where for sync, _ in SURFACES), "%s: no synchronous method" % op)
                for sync, asynchronous in SURFACES:
                    self.assertEqual(sorted(where.get(sync, [])), sorted(where.get(asynchronous, [])),
                                     "%s: %s and %s send it from different methods" % (op, sync.__name__,
                                                                                      asynchronous.__name__))
                    for name in where.get(asynchronous, []):
                        self.assertTrue(inspect.iscoroutinefunction(getattr(asynchronous, name)),
                                        "%s.%s is awaited" % (asynchronous.__name__, name))

    def test_each_ops_parameters_are_the_schemas_fields_with_their_types(self) -> None:
        builders: Dict[str, Dict[str, Builder]] = {}
        for _, _, builder in sending_methods():
            builders.setdefault(builder.op, {})[builder.name] = builder
        for op in self.ops:
            declared = self.requests.get(op)
            if declared is None or op not in builders:
                continue  # the two tests above say so
            properties: Dict[str, Any] = {
                key: value for key, value in declared.get("properties", {}).items() if key not in ("id", "op")}
            required = set(declared.get("required", [])) - {"op"}
            with self.subTest(op=op):
                covered: Set[str] = set()
                for builder in builders[op].values():
                    for parameter, changed, built in builder.wire_names():
                        where = "%s (%s): parameter %r" % (op, builder.name, parameter.name)
                        with self.subTest(parameter=where):
                            covered |= self.check_parameter(where, builder, parameter, changed, built, properties,
                                                            required)
                self.assertEqual(sorted(set(properties) - covered), [],
                                 "%s: fields of the schema no method of the package sends" % op)

    def check_parameter(self, where: str, builder: Builder, parameter: inspect.Parameter, changed: Set[str],
                        built: List[Dict[str, Any]], properties: Dict[str, Any], required: Set[str]) -> Set[str]:
        """That the parameter sends one field of the op's schema, of the type its annotation says,
        and has no default when the schema requires the field; the field."""
        self.assertEqual(len(changed), 1, "%s sends %s (one field expected): %s" % (
            where, sorted(changed) or "nothing", built))
        field = next(iter(changed))
        self.assertIn(field, properties, "%s sends %r, a field the schema lacks (it has %s)" % (
            where, field, sorted(properties)))
        annotation = builder.hints[parameter.name]
        kind, items, optional = annotation_type(annotation)
        self.assertEqual(kind, schema_type(properties[field]), "%s: its annotation %r, the schema's %r" % (
            where, annotation, properties[field]))
        if kind == "array":
            self.assertEqual(items, schema_type(resolved(properties[field]).get("items", {})), "%s: the items" % where)
        if field in required:
            self.assertFalse(optional or parameter.default is not parameter.empty,
                             "%s: the schema requires %r; the parameter has a default" % (where, field))
        return {field}

    def test_every_error_code_is_known(self) -> None:
        codes = self.schema["$defs"]["errorReply"]["properties"]["error"]["properties"]["code"]["enum"]
        known = {code.value for code in cued.ErrorCode}
        self.assertEqual(sorted(set(codes) - known), [], "codes the schema has and cued.ErrorCode lacks")
        self.assertEqual(sorted(known - set(codes)), [], "codes cued.ErrorCode has and the schema no longer")
        for code in codes:
            self.assertIs(cued.errors.ERROR_CLASSES[code].CODE, cued.ErrorCode(code), "the class of %s" % code)

    def test_every_reason_is_known(self) -> None:
        """A page change's `reason` (carousel lines and `paging` events) is carousel.PAGE_CHANGE_REASONS;
        every other (`reason` of replies and events, `silenced`) a `cued.Reason`."""
        found = list(enums_named(self.schema, {"reason", "silenced"}))
        page_change = [(path, values) for path, values in found
                       if path.endswith("/reason") and ("/carouselLine/" in path or "/paging/" in path)]
        others = [(path, values) for path, values in found if (path, values) not in page_change]
        self.assertGreaterEqual(len(page_change), 2, "the schema's page-change reasons: %s" % page_change)
        self.assertGreaterEqual(len(others), 4, "the schema's play, finish and completion reasons: %s" % others)
        known = {reason.value for reason in cued.Reason}
        page_reasons = set(carousel.PAGE_CHANGE_REASONS)
        for path, values in page_change:
            with self.subTest(path=path):
                self.assertEqual(sorted(set(values) - page_reasons), [], "%s: reasons carousel.py lacks" % path)
        for path, values in others:
            with self.subTest(path=path):
                self.assertEqual(sorted(set(values) - known), [], "%s: reasons cued.Reason does not know" % path)

    def test_every_event_kind_and_carousel_message_is_known(self) -> None:
        definitions = self.schema["$defs"]
        self.assertEqual(sorted(definitions["events"]), sorted(events.EVENT_KINDS))
        subscribable = definitions["requests"]["subscribe"]["properties"]["kinds"]["items"]["enum"]
        self.assertEqual(sorted(subscribable), sorted(events.SUBSCRIBABLE_KINDS))
        self.assertEqual(sorted(definitions["carouselLine"]["properties"]["event"]["enum"]),
                         sorted(carousel.CAROUSEL_EVENTS))


if __name__ == "__main__":
    unittest.main()
