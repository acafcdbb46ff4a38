"""`record`: a dataclass made without compiling source or importing `dataclasses`, for the classes on a
command's start-up path.

`dataclasses.dataclass` writes each method as Python source and compiles it: about 0.5 ms per frozen,
slotted class, which on `proctor check submission` came to half of start-up (issue 33 §3). `record`
builds the same class from shared closures instead (about 0.1 ms). Importing `dataclasses` itself
(it imports inspect, ast, dis and tokenize) cost a small tree's check about 10 ms more, so a record
keeps its fields as this module's `Spec`s and makes `__dataclass_fields__`, the `dataclasses.Field`
objects, on first read: `dataclasses.fields`, `replace`, `asdict`, `is_dataclass`, orjson and mypy
(through `dataclass_transform`) treat it as the dataclass it is. Making an instance costs a little
more (about 0.2 µs with every field given by position, about 1 µs by keyword), so the engine's
per-sample classes keep `dataclasses.dataclass`.

Supported: `frozen`, `slots`, `kw_only`, `eq`, `repr`, this module's `field(...)` or dataclasses'
(default, default_factory, init, repr, compare, hash, kw_only, metadata), `KW_ONLY`, `ClassVar`,
`__post_init__`, inheritance from records and dataclasses. `fields_of` and `replace` work on a record
without importing `dataclasses`.

`NamedTuple` is `typing.NamedTuple`'s class syntax without importing `typing` (3 ms of that start-up):
the modules on the path name typing's types only under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import sys
from operator import attrgetter
from reprlib import recursive_repr
from types import MemberDescriptorType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any, TypeVar, dataclass_transform, overload
    from typing import NamedTuple as NamedTuple

    _T = TypeVar("_T", bound=type)
    _V = TypeVar("_V")
    _R = TypeVar("_R")
else:  # importing typing was 3 ms of a small tree's check: what it gives at run time, done here

    def dataclass_transform(**_options):
        return lambda function: function

    class _TupleMaker(type):
        """`typing.NamedTuple`'s class syntax: a `collections.namedtuple` of the body's annotated
        names (its values the defaults), with the body's methods and docstring."""

        def __new__(mcls, name, bases, namespace):
            from collections import namedtuple

            annotations = namespace.get("__annotations__")
            if annotations is None:  # Python 3.14 keeps them out of the body (annotationlib reads them)
                annotations = _annotations(type(name, (), dict(namespace)))
            defaults = [namespace[n] for n in annotations if n in namespace]
            made = namedtuple(name, list(annotations), defaults=defaults, module=namespace["__module__"])
            made.__annotations__ = made.__new__.__annotations__ = dict(annotations)
            for key, value in namespace.items():
                if key not in ("__module__", "__qualname__", "__annotations__") and key not in annotations:
                    setattr(made, key, value)
            return made

    NamedTuple = type.__new__(_TupleMaker, "NamedTuple", (), {"__module__": __name__})

_setattr = object.__setattr__


class _Missing:
    """No value given: `MISSING` here, `dataclasses.MISSING` in the `Field`s made from a `Spec`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Spec:
    """One field of a record, as `dataclasses.Field` holds it (same attribute names)."""

    __slots__ = ("name", "type", "default", "default_factory", "init", "repr", "hash", "compare", "metadata",
                 "kw_only")  # fmt: skip

    def __init__(self, default: Any, default_factory: Any, init: bool, repr: bool, hash: bool | None,  # noqa: A002
                 compare: bool, metadata: Mapping[Any, Any] | None, kw_only: Any) -> None:  # fmt: skip
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name: str = ""
        self.type: Any = None
        self.default, self.default_factory, self.init, self.repr = default, default_factory, init, repr
        self.hash, self.compare, self.metadata, self.kw_only = hash, compare, metadata, kw_only

    def __repr__(self) -> str:
        return f"Spec(name={self.name!r}, default={self.default!r}, default_factory={self.default_factory!r})"


if TYPE_CHECKING:  # the overloads mypy reads

    @overload
    def field(*, default: _V, init: bool = ..., repr: bool = ..., hash: bool | None = ..., compare: bool = ...,  # noqa: A002
              metadata: Mapping[Any, Any] | None = ..., kw_only: bool = ...) -> _V: ...  # fmt: skip
    @overload
    def field(*, default_factory: Callable[[], _V], init: bool = ..., repr: bool = ..., hash: bool | None = ...,  # noqa: A002
              compare: bool = ..., metadata: Mapping[Any, Any] | None = ..., kw_only: bool = ...) -> _V: ...  # fmt: skip
    @overload
    def field(*, init: bool = ..., repr: bool = ..., hash: bool | None = ..., compare: bool = ...,  # noqa: A002
              metadata: Mapping[Any, Any] | None = ..., kw_only: bool = ...) -> Any: ...  # fmt: skip


def field(*, default: Any = MISSING, default_factory: Any = MISSING, init: bool = True, repr: bool = True,  # noqa: A002
          hash: bool | None = None, compare: bool = True, metadata: Mapping[Any, Any] | None = None,  # noqa: A002
          kw_only: Any = MISSING) -> Any:  # fmt: skip
    """A record field with options, as `dataclasses.field` declares one."""
    return Spec(default, default_factory, init, repr, hash, compare, metadata, kw_only)


def _from_dataclasses(f: Any) -> Spec:
    """The Spec of a `dataclasses.Field` (a class body may use dataclasses' `field`)."""
    gone = sys.modules["dataclasses"].MISSING

    def ours(v: Any) -> Any:
        return MISSING if v is gone else v

    spec = Spec(ours(f.default), ours(f.default_factory), f.init, f.repr, f.hash, f.compare,
                f.metadata or None, ours(f.kw_only))  # fmt: skip
    spec.name, spec.type = f.name, f.type
    return spec


def _is_dataclass_field(value: object) -> bool:
    dataclasses = sys.modules.get("dataclasses")  # no Field exists before dataclasses is imported
    return dataclasses is not None and isinstance(value, dataclasses.Field)


def _dataclass_fields(specs: dict[str, Spec]) -> dict[str, Any]:
    """`__dataclass_fields__` for `specs`: `dataclasses.Field` objects, as `dataclasses` makes them."""
    import dataclasses

    def theirs(v: Any) -> Any:
        return dataclasses.MISSING if v is MISSING else v

    out: dict[str, Any] = {}
    for name, s in specs.items():
        f: Any = dataclasses.field(default=theirs(s.default), default_factory=theirs(s.default_factory),
                                   init=s.init, repr=s.repr, hash=s.hash, compare=s.compare,
                                   metadata=s.metadata, kw_only=theirs(s.kw_only))  # fmt: skip
        f.name, f.type = s.name, s.type
        f._field_type = dataclasses._FIELD  # type: ignore[attr-defined]  # what `dataclasses.fields` selects
        out[name] = f
    return out


class _LazyFields:
    """A record's `__dataclass_fields__`: made on first read (which imports `dataclasses`), then kept
    in the class in its place."""

    __slots__ = ("owner", "specs")

    def __init__(self, specs: dict[str, Spec]) -> None:
        self.specs = specs
        self.owner: type | None = None

    def __get__(self, obj: object, objtype: type | None = None) -> dict[str, Any]:
        made = _dataclass_fields(self.specs)
        if self.owner is not None:
            type.__setattr__(self.owner, "__dataclass_fields__", made)
        return made


def _specs_of(cls: type) -> dict[str, Spec] | None:
    """The fields a class declares as a record or a dataclass (its own dict only), None if neither."""
    own = cls.__dict__.get("__dataclass_fields__")
    if own is None:
        return None
    held = cls.__dict__.get("__record_specs__")
    if held is not None:
        return held
    return {n: _from_dataclasses(f) for n, f in own.items() if f._field_type is sys.modules["dataclasses"]._FIELD}


def fields_of(obj: Any) -> tuple[Spec, ...]:
    """The fields of a record or dataclass (class or instance), as `dataclasses.fields` lists them,
    without importing `dataclasses` for a record. Each keeps its inherited fields, so the first class
    in the MRO that declares any holds them all (a plain subclass has its base's)."""
    for klass in (obj if isinstance(obj, type) else type(obj)).__mro__:
        specs = _specs_of(klass)
        if specs is not None:
            return tuple(specs.values())
    raise TypeError("must be called with a dataclass type or instance")


def replace(obj: _R, /, **changes: Any) -> _R:
    """`dataclasses.replace` for a record or dataclass instance, without importing `dataclasses` for a
    record: a new instance with `changes`, the other init fields copied."""
    for f in fields_of(obj):
        if not f.init:
            if f.name in changes:
                raise ValueError(f"field {f.name} is declared with init=False, it cannot be specified with replace()")
            continue
        if f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return type(obj)(**changes)


class _Params:
    """What `__dataclass_params__` holds, read by a dataclass that inherits from a record."""

    __slots__ = ("init", "repr", "eq", "order", "unsafe_hash", "frozen", "match_args", "kw_only", "slots",
                 "weakref_slot")  # fmt: skip

    def __init__(self, frozen: bool, eq: bool, repr_: bool, kw_only: bool, slots: bool) -> None:
        self.init, self.repr, self.eq, self.order, self.unsafe_hash = True, repr_, eq, False, False
        self.frozen, self.match_args, self.kw_only, self.slots, self.weakref_slot = (
            frozen,
            True,
            kw_only,
            slots,
            False,
        )


def _is_classvar(annotation: object) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))
    return getattr(annotation, "__origin__", None) is __import__("typing").ClassVar


def _is_kw_only_marker(annotation: object) -> bool:
    dataclasses = sys.modules.get("dataclasses")
    if dataclasses is not None and annotation is dataclasses.KW_ONLY:
        return True
    return annotation in ("KW_ONLY", "dataclasses.KW_ONLY")


def _annotations(cls: type) -> dict[str, Any]:
    """The class body's own annotations, as text where the module defers them. From Python 3.14 a
    module without `from __future__ import annotations` keeps them out of the class dict
    (annotationlib evaluates them on demand); dataclasses reads them through annotationlib there too."""
    own = cls.__dict__.get("__annotations__")
    if own is not None:
        return dict(own)
    try:
        import annotationlib  # type: ignore[import-not-found,unused-ignore]  # Python 3.14+
    except ImportError:
        return {}
    return dict(annotationlib.get_annotations(cls, format=annotationlib.Format.STRING))


def _own_fields(cls: type, kw_only: bool) -> dict[str, Spec]:
    """The fields the class body declares, in order, as `dataclasses` would make them."""
    out: dict[str, Spec] = {}
    for name, annotation in _annotations(cls).items():
        if _is_classvar(annotation):
            continue
        if _is_kw_only_marker(annotation):
            kw_only = True
            continue
        default = cls.__dict__.get(name, MISSING)
        if isinstance(default, Spec):
            f = default
        elif _is_dataclass_field(default):
            f = _from_dataclasses(default)
        else:
            if default is not MISSING and type(default).__hash__ is None:
                raise ValueError(
                    f"mutable default {type(default)} for field {name} is not allowed: use default_factory"
                )
            f = field(default=default)
        f.name, f.type = name, annotation
        if f.kw_only is MISSING:
            f.kw_only = kw_only
        out[name] = f
    return out


def _setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """The fastest way to set one field of a new instance: its slot's own `__set__` where it has one
    (as fast as the compiled `__init__` of a dataclass), else `object.__setattr__` (past `frozen`)."""
    slot = getattr(cls, name, None)
    if isinstance(slot, MemberDescriptorType):
        return slot.__set__
    return lambda obj, value: _setattr(obj, name, value)


def _has_default(f: Spec) -> bool:
    return f.default is not MISSING or f.default_factory is not MISSING


def _make_init(cls: type, fields: list[Spec], post_init: bool) -> Callable[..., None]:
    qualname = cls.__qualname__
    positional = [f for f in fields if f.init and not f.kw_only]
    npos = len(positional)
    accepted = frozenset(f.name for f in fields if f.init)
    # every field __init__ sets: the positional ones first, in order, then keyword-only and init=False
    # ones with a default: (name, default, factory)
    is_positional = {id(f) for f in positional}
    rest = [f for f in fields if id(f) not in is_positional and (f.init or _has_default(f))]
    plan = [(f.name, f.default, f.default_factory) for f in positional + rest]
    setters = [_setter(cls, name) for name, *_ in plan]
    # for a call of n positional arguments and no keywords: the rest's plain defaults, where that is all
    # (one pass from the end: the table's classes have up to 40 fields, and this ran once per class)
    defaults = tuple(d for _n, d, _f in plan)
    plain_from = len(defaults)  # defaults[plain_from:] are all plain defaults
    while plain_from and defaults[plain_from - 1] is not MISSING:
        plain_from -= 1
    tails: list[tuple[Any, ...] | None] = [defaults[n:] if n >= plain_from else None for n in range(npos + 1)]

    direct = npos if npos == len(plan) else -1  # a call giving every field positionally needs no binding

    def bind(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...] | list[Any]:
        n = len(args)
        if n > npos:
            raise TypeError(
                f"{qualname}.__init__() takes {npos + 1} positional arguments but {n + 1} were given"
            )
        if not kwargs:
            tail = tails[n]
            if tail is not None:
                return args + tail
        else:
            for key in kwargs:
                if key not in accepted:
                    raise TypeError(f"{qualname}.__init__() got an unexpected keyword argument {key!r}")
            for f in positional[:n]:
                if f.name in kwargs:
                    raise TypeError(f"{qualname}.__init__() got multiple values for argument {f.name!r}")
        values = list(args)
        for name, default, factory in plan[n:]:
            value = kwargs.get(name, MISSING)
            if value is MISSING:
                if default is not MISSING:
                    value = default
                elif factory is not MISSING:
                    value = factory()
                else:
                    raise TypeError(f"{qualname}.__init__() missing 1 required argument: {name!r}")
            values.append(value)
        return values

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        values = args if not kwargs and len(args) == direct else bind(args, kwargs)
        for set_field, value in zip(setters, values, strict=False):  # as long: bind fills every field
            set_field(self, value)

    def __init_post__(self: Any, *args: Any, **kwargs: Any) -> None:
        __init__(self, *args, **kwargs)
        self.__post_init__()

    return __init_post__ if post_init else __init__


def _getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    """A function from an instance to the tuple of the named fields' values."""
    if not names:
        return lambda _obj: ()
    if len(names) == 1:
        one = attrgetter(names[0])
        return lambda obj: (one(obj),)
    return attrgetter(*names)


def _check_order(qualname: str, fields: list[Spec]) -> None:
    seen_default = False
    for f in fields:
        if not f.init or f.kw_only:
            continue
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        if seen_default and not has_default:
            raise TypeError(f"{qualname}: non-default argument {f.name!r} follows default argument")
        seen_default = seen_default or has_default


def _frozen(message: str) -> Exception:
    """`dataclasses.FrozenInstanceError`, which callers catch (imported only when one is raised)."""
    from dataclasses import FrozenInstanceError

    return FrozenInstanceError(message)


def _build(cls: type, frozen: bool, slots: bool, kw_only: bool, eq: bool, repr_: bool) -> type:
    all_fields: dict[str, Spec] = {}
    any_frozen_base = has_bases = False
    for base in cls.__mro__[-1:0:-1]:
        base_fields = _specs_of(base)
        if base_fields is not None:
            has_bases = True
            all_fields.update(base_fields)
            any_frozen_base = any_frozen_base or base.__dict__["__dataclass_params__"].frozen
    if has_bases and any_frozen_base != frozen:
        raise TypeError(f"{cls.__qualname__}: cannot mix frozen and non-frozen dataclasses in one hierarchy")
    own = _own_fields(cls, kw_only)
    all_fields.update(own)
    fields = list(all_fields.values())
    _check_order(cls.__qualname__, fields)
    names = tuple(all_fields)

    body: dict[str, Any] = dict(cls.__dict__) if slots else {}
    for name, f in own.items():  # a default lives in the Field; slots forbid a class attribute too
        if slots:
            body.pop(name, None)
        elif f.default is not MISSING:
            body[name] = f.default
        elif isinstance(cls.__dict__.get(name), Spec) or _is_dataclass_field(cls.__dict__.get(name)):
            delattr(cls, name)
    if slots:
        inherited = {s for b in cls.__mro__[1:] for s in b.__dict__.get("__slots__", ())}
        body["__slots__"] = tuple(n for n in names if n not in inherited)
        body.pop("__dict__", None)
        body.pop("__weakref__", None)
    lazy = _LazyFields(all_fields)
    body["__dataclass_fields__"] = lazy
    body["__record_specs__"] = all_fields
    body["__dataclass_params__"] = _Params(frozen, eq, repr_, kw_only, slots)
    body["__match_args__"] = tuple(f.name for f in fields if f.init and not f.kw_only)
    if repr_ and "__repr__" not in cls.__dict__:
        shown = _getter([f.name for f in fields if f.repr])
        shown_names = [f.name for f in fields if f.repr]

        @recursive_repr()
        def __repr__(self: Any) -> str:
            parts = ", ".join(f"{n}={v!r}" for n, v in zip(shown_names, shown(self), strict=True))
            return f"{type(self).__qualname__}({parts})"

        body["__repr__"] = __repr__
    explicit_hash = "__hash__" in cls.__dict__ and cls.__dict__["__hash__"] is not None
    if eq and "__eq__" not in cls.__dict__:
        compared = _getter([f.name for f in fields if f.compare])

        def __eq__(self: Any, other: object) -> bool:
            if other.__class__ is self.__class__:
                return compared(self) == compared(other)
            return NotImplemented

        body["__eq__"] = __eq__
    if eq and not explicit_hash:
        if frozen:
            hashed = _getter([f.name for f in fields if (f.compare if f.hash is None else f.hash)])
            body["__hash__"] = lambda self: hash(hashed(self))
        else:
            body["__hash__"] = None
    field_set = frozenset(names)
    if frozen:
        owner: list[type] = []

        def __setattr__(self: Any, name: str, value: Any) -> None:
            if type(self) is owner[0] or name in field_set:
                raise _frozen(f"cannot assign to field {name!r}")
            super(owner[0], self).__setattr__(name, value)  # type: ignore[arg-type]

        def __delattr__(self: Any, name: str) -> None:
            if type(self) is owner[0] or name in field_set:
                raise _frozen(f"cannot delete field {name!r}")
            super(owner[0], self).__delattr__(name)  # type: ignore[arg-type]

        body["__setattr__"], body["__delattr__"] = __setattr__, __delattr__
        if slots:  # pickling a frozen slotted instance: its state is the fields' values
            state = _getter(list(names))

            def __getstate__(self: Any) -> tuple[Any, ...]:
                return state(self)

            def __setstate__(self: Any, values: tuple[Any, ...]) -> None:
                for n, v in zip(names, values, strict=True):
                    _setattr(self, n, v)

            body["__getstate__"], body["__setstate__"] = __getstate__, __setstate__
    if slots:  # a new class, as dataclasses makes one: __slots__ cannot be added to a made class
        new = type(cls)(cls.__name__, cls.__bases__, body)
        new.__qualname__ = cls.__qualname__
    else:
        for key, value in body.items():
            setattr(cls, key, value)
        new = cls
    lazy.owner = new
    if frozen:
        owner.append(new)
    if "__init__" not in cls.__dict__:  # after the class: its slots are what __init__ writes through
        new.__init__ = _make_init(new, fields, hasattr(new, "__post_init__"))  # type: ignore[misc]
    return new


if TYPE_CHECKING:

    @overload
    def record(cls: _T, /) -> _T: ...
    @overload
    def record(
        *, frozen: bool = ..., slots: bool = ..., kw_only: bool = ..., eq: bool = ..., repr: bool = ...
    ) -> Callable[[_T], _T]: ...


@dataclass_transform(field_specifiers=(field, Spec))
def record(
    cls: _T | None = None,
    /,
    *,
    frozen: bool = False,
    slots: bool = False,
    kw_only: bool = False,
    eq: bool = True,
    repr: bool = True,  # noqa: A002 - the name dataclasses uses
) -> _T | Callable[[_T], _T]:
    """Make `cls` a dataclass as `dataclasses.dataclass(cls, frozen=..., slots=..., ...)` would."""

    def wrap(c: _T) -> _T:
        return _build(c, frozen, slots, kw_only, eq, repr)  # type: ignore[return-value]

    return wrap if cls is None else wrap(cls)
