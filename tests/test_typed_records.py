"""`proctor.typed_records.record` makes the class `dataclasses.dataclass` makes: each case below is built
both ways from one class body and every observable behaviour is compared."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import KW_ONLY, field
from typing import Any, ClassVar

import orjson
import pytest

from proctor.typed_records import record


def both(**params: Any) -> Any:
    """A decorator that returns (dataclass version, record version) of one class body."""

    def make(body: type) -> tuple[type, type]:
        def copy_of() -> type:
            ns = {k: v for k, v in body.__dict__.items() if k not in ("__dict__", "__weakref__")}
            ns["__annotations__"] = dict(body.__dict__.get("__annotations__", {}))
            for k, v in list(ns.items()):  # a Field is filled in by the decorator: each version its own
                if isinstance(v, dataclasses.Field):
                    ns[k] = field(default=v.default, default_factory=v.default_factory, init=v.init, repr=v.repr,
                                  compare=v.compare, hash=v.hash, kw_only=v.kw_only)  # fmt: skip
            return type(body.__name__, body.__bases__, ns)

        return dataclasses.dataclass(**params)(copy_of()), record(**params)(copy_of())

    return make


@both(frozen=True, slots=True)
class Entry:
    fname: str
    line: int
    key: str = "k"
    tags: list[str] = field(default_factory=list, compare=False)
    LIMIT: ClassVar[int] = 3


@both(slots=True)
class Mutable:
    a: int
    b: dict[str, int] = field(default_factory=dict)
    hidden: int = field(default=7, repr=False, init=False)


@both(frozen=True)
class Keyword:
    a: int
    _: KW_ONLY
    b: int = 2
    c: str = field(default="c", hash=False)


@both(slots=True, kw_only=True)
class AllKeyword:
    x: int
    y: int = 0


CASES: list[tuple[tuple[type, type], list[tuple[tuple[Any, ...], dict[str, Any]]]]] = [
    (Entry, [(("f", 1), {}), (("f", 1, "x"), {}), (("f",), {"line": 2, "tags": ["t"]}), ((), {"fname": "f", "line": 3})]),
    (Mutable, [((1,), {}), ((1, {"k": 2}), {}), ((), {"a": 5, "b": {}})]),
    (Keyword, [((1,), {}), ((1,), {"b": 5, "c": "z"}), ((), {"a": 1, "c": "y"})]),
    (AllKeyword, [((), {"x": 1}), ((), {"x": 1, "y": 2})]),
]  # fmt: skip
BAD_CALLS: list[tuple[tuple[type, type], tuple[Any, ...], dict[str, Any]]] = [
    (Entry, (), {}),
    (Entry, ("f", 1, "k", [], 5), {}),
    (Entry, ("f", 1), {"line": 2}),
    (Entry, ("f", 1), {"nope": 1}),
    (Mutable, (1,), {"hidden": 3}),
    (Keyword, (1, 2), {}),
    (AllKeyword, (1,), {}),
    (AllKeyword, (), {}),
]


def _observe(obj: Any) -> dict[str, Any]:
    cls = type(obj)
    out = {
        "repr": repr(obj).split("(", 1)[1],
        "fields": [(f.name, f.init, f.repr, f.compare, f.kw_only) for f in dataclasses.fields(obj)],
        "asdict": dataclasses.asdict(obj),
        "astuple": dataclasses.astuple(obj),
        "is_dataclass": dataclasses.is_dataclass(obj),
        "match_args": cls.__match_args__,
        "slots": getattr(cls, "__slots__", None),
        "has_dict": hasattr(obj, "__dict__"),
        "hashable": cls.__hash__ is not None,
        "orjson": orjson.dumps(obj),
    }
    if cls.__hash__ is not None:
        out["hash_equal_to_copy"] = hash(obj) == hash(copy.copy(obj))
    return out


@pytest.mark.parametrize(("pair", "calls"), CASES, ids=lambda v: getattr(v[0], "__name__", ""))
def test_record_behaves_as_the_dataclass(pair: tuple[type, type], calls: list[Any]) -> None:
    made, ours = pair
    for args, kwargs in calls:
        a, b = made(*args, **kwargs), ours(*args, **kwargs)
        assert _observe(a) == _observe(b)
        assert (a == made(*args, **kwargs)) is (b == ours(*args, **kwargs)) is True
        assert (b == a) is False  # another class, as between two dataclasses
        other = dataclasses.fields(b)[0].name
        changed = dataclasses.replace(b, **{other: getattr(b, other)})
        assert changed == b and changed is not b
        assert copy.deepcopy(b) == b


@pytest.mark.parametrize(("pair", "args", "kwargs"), BAD_CALLS)
def test_record_refuses_the_calls_the_dataclass_refuses(pair: tuple[type, type], args: Any, kwargs: Any) -> None:
    made, ours = pair
    with pytest.raises(TypeError):
        made(*args, **kwargs)
    with pytest.raises(TypeError) as err:
        ours(*args, **kwargs)
    assert made.__qualname__ in str(err.value)


def test_frozen_refuses_assignment_and_deletion() -> None:
    made, ours = Entry
    for cls in (made, ours):
        obj = cls("f", 1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            obj.line = 2
        with pytest.raises(dataclasses.FrozenInstanceError):
            del obj.line
        assert obj.line == 1


def test_hash_follows_compare_and_hash_flags() -> None:
    _, ours = Keyword
    assert hash(ours(1, b=2, c="x")) == hash(ours(1, b=2, c="y"))  # c: hash=False
    assert ours(1, b=2, c="x") != ours(1, b=2, c="y")  # but compared
    _, entry = Entry
    assert entry("f", 1, tags=["a"]) == entry("f", 1, tags=["b"])  # tags: compare=False
    assert Mutable[1].__hash__ is None  # eq without frozen: unhashable, as a dataclass


def test_factories_run_per_instance_and_post_init_runs_last() -> None:
    seen: list[int] = []

    @record(slots=True)
    class WithPost:
        a: int
        items: list[int] = field(default_factory=list)

        def __post_init__(self) -> None:
            seen.append(self.a)

    one, two = WithPost(1), WithPost(2)
    assert one.items is not two.items and seen == [1, 2]


def test_inheritance_adds_fields_after_the_base() -> None:
    @record(frozen=True, slots=True)
    class Base:
        a: int
        b: int = 1

    @record(frozen=True, slots=True)
    class Child(Base):
        c: int = 2

    obj = Child(5, c=3)
    assert [f.name for f in dataclasses.fields(obj)] == ["a", "b", "c"] and (obj.a, obj.b, obj.c) == (5, 1, 3)
    assert repr(obj) == "test_inheritance_adds_fields_after_the_base.<locals>.Child(a=5, b=1, c=3)"

    with pytest.raises(TypeError):

        @record(slots=True)
        class Thawed(Base):  # a non-frozen child of a frozen record, refused as dataclasses refuses it
            d: int = 0


def test_definitions_the_dataclass_refuses() -> None:
    with pytest.raises(ValueError):

        @record
        class MutableDefault:
            a: list[int] = []  # noqa: RUF012 - the case under test

    with pytest.raises(TypeError):

        @record
        class Order:
            a: int = 0
            b: int


@record(frozen=True, slots=True)
class FrozenPickled:
    a: int
    b: str = "b"


@record(slots=True)
class MutablePickled:
    a: int
    b: list[int] = field(default_factory=list)


def test_pickles_round_trip() -> None:
    for obj in (FrozenPickled(1, "x"), MutablePickled(2, [3])):
        back = pickle.loads(pickle.dumps(obj))
        assert back == obj and back is not obj and type(back) is type(obj)


def test_this_modules_field_declares_what_dataclasses_field_declares() -> None:
    """A body written with typed_records.field gives the class dataclasses makes from dataclasses.field."""
    from proctor import typed_records

    @record(frozen=True, slots=True)
    class Ours:
        a: int
        tags: list[str] = typed_records.field(default_factory=list, compare=False)
        note: str = typed_records.field(default="n", repr=False, metadata={"unit": "s"})

    @dataclasses.dataclass(frozen=True, slots=True)
    class Theirs:
        a: int
        tags: list[str] = field(default_factory=list, compare=False)
        note: str = field(default="n", repr=False, metadata={"unit": "s"})

    ours, theirs = Ours(1, ["x"]), Theirs(1, ["x"])
    assert orjson.dumps(ours) == orjson.dumps(theirs)  # before anything reads __dataclass_fields__
    assert [(f.name, f.default, f.init, f.repr, f.compare, f.hash, dict(f.metadata), f.kw_only)
            for f in dataclasses.fields(ours)] == [
        (f.name, f.default, f.init, f.repr, f.compare, f.hash, dict(f.metadata), f.kw_only)
        for f in dataclasses.fields(theirs)]  # fmt: skip
    assert [f.name for f in typed_records.fields_of(ours)] == [f.name for f in dataclasses.fields(theirs)]
    assert typed_records.replace(ours, a=2) == Ours(2, ["x"]) and typed_records.replace(theirs, a=2) == Theirs(2, ["x"])
    assert repr(ours).split("(", 1)[1] == repr(theirs).split("(", 1)[1]
    with pytest.raises(ValueError):
        typed_records.field(default=1, default_factory=int)
    with pytest.raises(TypeError):
        typed_records.fields_of(object())


def test_making_records_imports_no_dataclasses() -> None:
    """A record is made, built, compared and replaced without `dataclasses` (its import is most of
    a small check's start-up); reading its `__dataclass_fields__` imports it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from proctor.typed_records import field, fields_of, record, replace\n"
        "@record(frozen=True, slots=True)\n"
        "class R:\n"
        "    a: int\n"
        "    b: list = field(default_factory=list)\n"
        "r = replace(R(1), a=2)\n"
        "print(r == R(2), [f.name for f in fields_of(r)], 'dataclasses' in sys.modules)\n"
        "import dataclasses\n"
        "print(dataclasses.is_dataclass(r), [f.name for f in dataclasses.fields(r)])\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.stdout.splitlines() == ["True ['a', 'b'] False", "True ['a', 'b']"], res.stderr


_TUPLE_BODY = (
    "class Estimate(NamedTuple):\n"
    "    '''One estimate.'''\n"
    "\n"
    "    ok: bool\n"
    "    text: str\n"
    "    low: int = 0\n"
    "    high: int = 5\n"
    "\n"
    "    def width(self) -> int:\n"
    "        return self.high - self.low\n"
)


def _tuple_class(named_tuple: Any) -> Any:
    space: dict[str, Any] = {"NamedTuple": named_tuple, "__name__": "proctor.somewhere"}
    exec(_TUPLE_BODY, space)  # the same class body under each NamedTuple
    return space["Estimate"]


def test_named_tuple_makes_what_typings_class_syntax_makes() -> None:
    import typing

    from proctor.typed_records import NamedTuple

    ours, theirs = _tuple_class(NamedTuple), _tuple_class(typing.NamedTuple)
    for cls in (ours, theirs):
        e = cls(True, "ok", 2)
        assert tuple(e) == (True, "ok", 2, 5) and e == (True, "ok", 2, 5)
        ok, text, low, high = e
        assert (ok, text, low, high) == (True, "ok", 2, 5) and e.width() == 3
        assert e._replace(high=9).high == 9 and e._asdict() == {"ok": True, "text": "ok", "low": 2, "high": 5}
    for attr in ("_fields", "_field_defaults", "__doc__", "__module__", "__name__"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert list(ours.__annotations__) == list(theirs.__annotations__)  # typing wraps text in ForwardRef
    assert repr(ours(False, "no")) == repr(theirs(False, "no")) == "Estimate(ok=False, text='no', low=0, high=5)"
    with pytest.raises(TypeError):
        ours(True)
    assert issubclass(ours, tuple)


def test_named_tuple_imports_no_typing() -> None:
    """The check's start-up path defines NamedTuples without `typing` (3 ms of a small check)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from proctor.typed_records import NamedTuple\n"
        "class P(NamedTuple):\n"
        "    x: int\n"
        "    y: int = 2\n"
        "print(P(1), 'typing' in sys.modules)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.stdout.splitlines() == ["P(x=1, y=2) False"], res.stderr
