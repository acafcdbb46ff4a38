"""A `--sut` SPEC, parsed once into a `SutSpec` that every layer passes on (never the text).

    NAME[:k=v,...]                     a registered SUT (entry point group "proctor.suts")
    module.path:factory[:k=v,...]      a factory in an importable module
    path/to/file.py:factory[:k=v,...]  a factory in a Python file

The forms never overlap: a part ending in `.py` is a file; after the first ':' a NAME has k=v
pairs (each holds '='), a module a factory name (none does).

Parameters are `key=value` items separated by ','; empty items are skipped. A key is letters,
digits, '_', '.' or '-'. A value is the text up to the next ',' (spaces around it dropped), or,
when it starts with '"', a quoted value that may hold anything: inside the quotes `\\"` is a quote
and `\\\\` a backslash (any other backslash is kept as written). So a value with a comma is
written `prompt="a, b"`. A repeated key stays repeated here: the factory's fields decide (a list's
`url=A,url=B` is `url=A|B`, suts/params.py).
"""

from __future__ import annotations

import re
from typing import Literal

from proctor.errors import ConfigError
from proctor.typed_records import field, record, replace

Kind = Literal["name", "module", "file"]
Pairs = tuple[tuple[str, str], ...]
OPTION = "--sut"
QUOTE, ESCAPE = '"', "\\"
_KEY = re.compile(r"[A-Za-z0-9_.\-]+")
_SHOWN = 60  # characters of the offending text an error repeats


def _shown(text: str) -> str:
    """Bounded, printable: an error is one line whatever was typed."""
    one = text.encode("unicode_escape").decode("ascii")
    return one if len(one) <= _SHOWN else one[: _SHOWN - 3] + "..."


@record(frozen=True, slots=True)
class SutSpec:
    """A parsed `--sut`: which factory (`kind`, `target`: a registered name, "module:factory" or
    "path.py:factory") and its parameters as ordered (key, value) pairs; `text` is what was typed
    (for logs and errors), "" for a spec built in code."""

    kind: Kind
    target: str
    params: Pairs = ()
    text: str = field(default="", compare=False)

    def __str__(self) -> str:
        return self.text or self.render()

    def render(self) -> str:
        """The spec as `--sut` text that parses back to this spec (values quoted where needed)."""
        if not self.params:
            return self.target
        return f"{self.target}:" + ",".join(f"{k}={quote(v)}" for k, v in self.params)

    def value(self, key: str) -> str | None:
        """The last value given for `key`, None when it is not given."""
        found = [v for k, v in self.params if k == key]
        return found[-1] if found else None

    def with_param(self, key: str, value: str, option: str) -> SutSpec:
        """This spec with one more `key=value` (e.g. `--dataset FILE` -> dataset=FILE); refused when
        the spec already names `key`, since two sources would disagree (`option` says which)."""
        if self.value(key) is not None:
            raise ConfigError(f"{key} is given twice (in --sut and as {option})", key=option)
        more = replace(self, params=(*self.params, (_checked_key(key), value)), text="")
        return replace(more, text=more.render())


def quote(value: str) -> str:
    """`value` as a spec writes it: bare where it reads back unchanged, else in quotes."""
    if value and ("," not in value and value == value.strip() and not value.startswith(QUOTE)):
        return value
    if not value:
        return value
    escaped = value.replace(ESCAPE, ESCAPE * 2).replace(QUOTE, ESCAPE + QUOTE)
    return f"{QUOTE}{escaped}{QUOTE}"


def _checked_key(key: str) -> str:
    if not _KEY.fullmatch(key):
        raise ConfigError(
            f"SUT parameter name '{_shown(key)}' is not a name (letters, digits, '_', '.', '-'); "
            f"write key=value, and quote a value holding ',' as key=\"a,b\"",
            key=OPTION,
        )
    return key


def _quoted(text: str, start: int, key: str) -> tuple[str, int]:
    """The quoted value opening at text[start] and the index after its closing quote."""
    out: list[str] = []
    i = start + 1
    while i < len(text):
        c = text[i]
        if c == ESCAPE and i + 1 < len(text) and text[i + 1] in (QUOTE, ESCAPE):
            out.append(text[i + 1])
            i += 2
        elif c == QUOTE:
            return "".join(out), i + 1
        else:
            out.append(c)
            i += 1
    raise ConfigError(f"SUT parameter {_shown(key)}: its value's quote is not closed (write {key}=\"...\")",
                      key=OPTION)


def parse_params(text: str) -> Pairs:
    """`k=v,k2="a,b"` -> (("k", "v"), ("k2", "a,b")), repeats kept; ConfigError naming the key."""
    pairs: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        comma, equals = text.find(",", i), text.find("=", i)
        comma = n if comma < 0 else comma
        if equals < 0 or comma < equals:  # an item without '='
            item = text[i:comma]
            if item:
                raise ConfigError(f"SUT parameter '{_shown(item)}' is not key=value", key=OPTION)
            i = comma + 1
            continue
        key = _checked_key(text[i:equals].strip())
        j = equals + 1
        while j < n and text[j] in " \t":
            j += 1
        if j < n and text[j] == QUOTE:
            value, j = _quoted(text, j, key)
            rest = text.find(",", j)
            rest = n if rest < 0 else rest
            if text[j:rest].strip():
                raise ConfigError(
                    f"SUT parameter {key}: text after its quoted value ('{_shown(text[j:rest])}'); "
                    "put ',' right after the closing quote",
                    key=OPTION,
                )
            i = rest + 1
        else:
            value, i = text[equals + 1 : comma].strip(), comma + 1
        pairs.append((key, value))
    return tuple(pairs)


def parse_sut_spec(text: str) -> SutSpec:
    """The one parser of `--sut` text (the module docstring says the grammar); a ConfigError, one
    line naming the key or the form, for anything else."""
    head, _, rest = text.partition(":")
    if not head.strip():
        raise ConfigError(f"'{_shown(text)}': name a SUT (see --list-suts), module:factory or file.py:factory",
                          key=OPTION)
    if head.endswith(".py"):  # only the part before the first ':' names a file (a URL may hold ".py:")
        factory, _, params = rest.partition(":")
        if not factory:
            raise ConfigError(f"'{_shown(text)}': name the factory, e.g. {_shown(head)}:make_sut", key=OPTION)
        return SutSpec("file", f"{head}:{factory}", parse_params(params), text)
    factory, _, params = rest.partition(":")
    if factory and "=" not in factory:  # module:factory[:params]; a NAME's parameters always hold '='
        return SutSpec("module", f"{head}:{factory}", parse_params(params), text)
    return SutSpec("name", head, parse_params(rest), text)


def as_spec(spec: SutSpec | str) -> SutSpec:
    """A library caller's text parsed (by `parse_sut_spec`), a `SutSpec` as it is."""
    return spec if isinstance(spec, SutSpec) else parse_sut_spec(spec)


__all__ = ["OPTION", "Kind", "Pairs", "SutSpec", "as_spec", "parse_params", "parse_sut_spec", "quote"]
