"""`LazyPattern`: a regular expression compiled on its first use, for the patterns of a command's
start-up path that most runs never use.

`re.compile` runs the pure-Python sre parser and compiler: 50 to 400 µs a pattern. A module-level
pattern is compiled at import whether or not the run needs it; on `proctor check submission` of a
small tree the unused ones came to about 1.5 ms of its start-up (issue 33 §3). A `LazyPattern` has the
methods the checkers call, each compiling the pattern once (then kept) before delegating.
"""

from __future__ import annotations

import re
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any, AnyStr, Generic
else:  # typing's import was 3 ms of a small tree's check; at run time the parameter is only a name

    class Generic:
        def __class_getitem__(cls, _parameter):
            return object

    AnyStr = str


class LazyPattern(Generic[AnyStr]):
    """`re.compile(pattern, flags)`, done on the first call of a method."""

    __slots__ = ("pattern", "flags", "_compiled")

    def __init__(self, pattern: AnyStr, flags: int = 0) -> None:
        self.pattern: AnyStr = pattern
        self.flags = flags
        self._compiled: re.Pattern[AnyStr] | None = None

    def compiled(self) -> re.Pattern[AnyStr]:
        """The compiled pattern (compiled now if it was not yet)."""
        out = self._compiled
        if out is None:
            out = self._compiled = re.compile(self.pattern, self.flags)
        return out

    def match(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[AnyStr] | None:
        return self.compiled().match(string, pos, endpos)

    def fullmatch(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[AnyStr] | None:
        return self.compiled().fullmatch(string, pos, endpos)

    def search(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[AnyStr] | None:
        return self.compiled().search(string, pos, endpos)

    def finditer(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[AnyStr]]:
        return self.compiled().finditer(string, pos, endpos)

    def findall(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self.compiled().findall(string, pos, endpos)

    def sub(self, repl: AnyStr | Callable[[re.Match[AnyStr]], AnyStr], string: AnyStr, count: int = 0) -> AnyStr:
        return self.compiled().sub(repl, string, count)

    def split(self, string: AnyStr, maxsplit: int = 0) -> list[AnyStr | None]:
        return self.compiled().split(string, maxsplit)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags!r})"
