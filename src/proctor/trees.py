"""A folder someone else made (a submission, a runs folder, a training package): walked, read, copied
and written without reaching outside it. The one home of tree safety; every tree reader and writer
in proctor goes through here.

The decisions (docs/deviations.md, "Issue 30: untrusted trees"):
- Roots are taken once, resolved (`real_root`): links above the root are the user's. Below it, a
  path is used only when none of its components is a symbolic link (`kind` says "link"). Files are
  opened one folder at a time with O_NOFOLLOW (`open_file`), so a link swapped in between is
  refused, not followed. The official layout needs no link.
- One kind of link is kept, in copies (`copy_tree`, `scan`): one under a folder named in
  `links_ok_under` (the implementation's source, where published submissions link model variants
  to one folder) that resolves to a file, or to a folder holding no link, inside the root (so no
  chain of kept links loops). It is recreated as a relative link and never followed. Every other
  link, a link out of the root, a loop, a dangling link, a FIFO, a socket or a device is refused
  with one line naming it; a reader (the checker) makes each an ERROR finding instead.
- Writers and copies open through `open_file`/`write_new`/`replace`, which no swap of a folder or
  file for a link redirects. The checks' readers look with `kind` first and then open by path: a
  tree changed under a running check (between the look and the open) is not defended there.
- A walk or copy stops at MAX_ENTRIES entries, MAX_DEPTH levels below its root and MAX_COPY_BYTES.
- `fingerprint` digests a tree from one stat per entry (no file opened, no link followed), so a
  reader that stored the digest can skip a tree that did not change (`proctor results ingest`).
- A name that becomes a folder is one safe path component (`safe_name`).
- Output: a new folder must not exist yet, not even as a link (`new_folder`); files are created with
  O_EXCL (`write_new`), and a file changed in place is replaced by a new one (`replace`): never
  truncated or appended through a link, symbolic or hard.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from pathlib import Path, PurePath

from proctor.errors import TreeError
from proctor.lazy_patterns import LazyPattern
from proctor.typed_records import field, record
from proctor.untrusted_text import printable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any, TypeVar

    _T = TypeVar("_T")

MAX_ENTRIES = 200_000  # files and folders one walk or copy visits (the largest published submitter: ~13,000)
MAX_DEPTH = 40  # folder levels below a walk's root (the official inference layout: 10)
MAX_COPY_BYTES = 256 << 30  # bytes one copy writes (untruncated accuracy logs included)
MAX_NAME = 128  # characters of a name that becomes a folder
MAX_PROBLEMS = 100  # problems one scan lists (the count goes on)
SAFE_NAME = LazyPattern(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_NAME - 1}}}")
SAFE_NAME_TEXT = f"letters, digits, '.', '_' and '-', starting with a letter or digit, at most {MAX_NAME}"

FILE, DIR, LINK, OTHER, MISSING = "file", "dir", "link", "other", "missing"  # `kind`; else "error: <why>"

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIR_FLAGS = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
_BLOCK = 1 << 20


def show(path: str | os.PathLike[str]) -> str:
    """A path from a tree, as one printable line (a file name may hold a newline)."""
    return printable(os.fspath(path), 400)


# --- names ---------------------------------------------------------------------------------------
def safe_name(name: str, what: str) -> str:
    """`name` when it is one safe path component, else TreeError naming `what` (an option or a file)."""
    if SAFE_NAME.fullmatch(name):
        return name
    why = "is empty" if not name else f"is not one folder name ({SAFE_NAME_TEXT})"
    raise TreeError(f"{what} {printable(name, 80)!r} {why}; give a plain name such as ACME or my-system")


# --- one reader's look at a tree ------------------------------------------------------------------
MAX_PARSED = 32  # files whose parse one reading keeps (a result's logs are read again within it)


@record(slots=True)
class _Reading:
    kinds: dict[tuple[str, ...], str] = field(default_factory=dict)  # path parts -> kind
    parsed: OrderedDict[tuple[str, str], tuple[tuple[int, int, int, int], Any]] = field(default_factory=OrderedDict)


_READING: ContextVar[_Reading | None] = ContextVar("proctor_tree_reading", default=None)


@contextmanager
def reading() -> Iterator[None]:
    """A reader's one look at a tree (the submission checker's): inside the block each path's kind is
    looked up once, and a file parsed through `parsed` is parsed once while its identity holds (the
    checker reads a result's detail log for its own checks, for its audits' consistency and for their
    re-verification). Writers never use it: a tree being written changes under it. Nested blocks
    share the outer look."""
    if _READING.get() is not None:
        yield
        return
    token = _READING.set(_Reading())
    try:
        yield
    finally:
        _READING.reset(token)


def parsed(path: str | os.PathLike[str], how: str, parse: Callable[[], _T]) -> _T:
    """`parse()`, or inside `reading()` what it gave for this path and `how` while the file has the
    same device, inode, size and modification time (the last MAX_PARSED kept). A failure is not kept."""
    look = _READING.get()
    if look is None:
        return parse()
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except OSError:
        return parse()  # the parser says why it cannot read it
    ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    key = (how, p)
    hit = look.parsed.get(key)
    if hit is not None and hit[0] == ident:
        look.parsed.move_to_end(key)
        value: _T = hit[1]
        return value
    value = parse()
    look.parsed[key] = (ident, value)
    look.parsed.move_to_end(key)
    while len(look.parsed) > MAX_PARSED:
        look.parsed.popitem(last=False)
    return value


# --- kinds ---------------------------------------------------------------------------------------
def _classify(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return LINK
    if stat.S_ISDIR(mode):
        return DIR
    return FILE if stat.S_ISREG(mode) else OTHER


def _prefixes(path: Path) -> Iterator[Path]:
    parts = path.parts
    start = 1 if path.is_absolute() else 0
    cur = Path(parts[0]) if start else Path()
    for part in parts[start:]:
        cur = cur / part
        yield cur


def first_link(path: str | os.PathLike[str]) -> Path | None:
    """The first component of `path` that is a symbolic link, or None."""
    for prefix in _prefixes(Path(path)):
        try:
            if stat.S_ISLNK(os.lstat(prefix).st_mode):
                return prefix
        except OSError:
            return None
    return None


def kind(path: str | os.PathLike[str]) -> str:
    """"file" (regular), "dir", "link" (the path or a folder on it is a symbolic link: never
    followed), "other" (FIFO, socket, device), "missing" or "error: <why>". Nothing is followed.
    Inside `reading()`, each folder on the way is looked at once."""
    p = path if isinstance(path, Path) else Path(path)
    look = _READING.get()
    if look is not None:
        return _kind_in(p, look.kinds)
    prefixes = list(_prefixes(p)) or [p]
    for i, prefix in enumerate(prefixes):
        got = _lstat_kind(prefix)
        if got == LINK or i == len(prefixes) - 1:
            return got
        if got != DIR:
            return got if got.startswith("error") else MISSING
    return MISSING  # pragma: no cover - the loop returns


def _lstat_kind(path: str | os.PathLike[str]) -> str:
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return MISSING
    except OSError as exc:
        return f"error: {exc.strerror or exc}"
    return _classify(mode)


def _kind_in(p: Path, kinds: dict[tuple[str, ...], str]) -> str:
    """`kind` from the kinds already looked up: the path's longest known prefix, then one lstat per
    component past it (each remembered)."""
    parts = p.parts
    start = 1 if p.is_absolute() else 0
    if len(parts) <= start:  # the root or "."
        return _lstat_kind(p)
    i = len(parts)
    while i > start and parts[:i] not in kinds:
        i -= 1
    got = kinds[parts[:i]] if i > start else DIR
    while i < len(parts):
        if got == DIR:
            got = _lstat_kind(os.path.join(*parts[: i + 1]))
        elif got != LINK and not got.startswith("error"):
            got = MISSING  # a folder on the way is a file, a FIFO or missing
        i += 1
        kinds[parts[:i]] = got
    return got


def is_file(path: str | os.PathLike[str]) -> bool:
    return kind(path) == FILE


def is_dir(path: str | os.PathLike[str]) -> bool:
    return kind(path) == DIR


def not_a_file(path: str | os.PathLike[str], got: str | None = None) -> str:
    """Why `path` is not read, in words, from its kind."""
    got = got or kind(path)
    if got == LINK:
        where = first_link(path)
        return (
            f"{'a folder on its path, ' + show(where) + ', is' if where and Path(where) != Path(path) else 'it is'}"
            " a symbolic link; proctor follows no link in a tree it was given: put the file itself here"
        )
    if got == OTHER:
        return "not a regular file (a FIFO, socket or device): never opened"
    if got == DIR:
        return "a folder, not a file"
    if got == MISSING:
        return "missing"
    return f"cannot be read ({got.removeprefix('error: ')})"


def real_root(path: str | os.PathLike[str]) -> Path:
    """The root a command was given, unchanged when nothing on it is a link, else resolved: links
    above and at the root are the user's choice; below it none is followed."""
    p = Path(path)
    return p if first_link(p) is None else Path(os.path.realpath(p))


# --- opening without following ---------------------------------------------------------------------
def _parent_fd(path: Path) -> tuple[int, str]:
    """An open fd of `path`'s folder, reached one component at a time without following a link,
    and the last component's name."""
    parts = path.parts
    absolute = path.is_absolute()
    names = parts[1:] if absolute else parts
    if not names:
        raise TreeError(f"{show(path)}: not a file path")
    fd = os.open(parts[0] if absolute else ".", _DIR_FLAGS)
    try:
        for name in names[:-1]:
            try:
                nfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise TreeError(f"{show(path)}: {not_a_file(path)}") from exc
                raise
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd, names[-1]


def _open_in(fd: int, name: str, flags: int, path: Path, mode: int = 0o644) -> int:
    try:
        return os.open(name, flags | _NOFOLLOW | _CLOEXEC, mode, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) or (
            exc.errno == errno.EEXIST and _lkind(fd, name) == LINK
        ):
            raise TreeError(f"{show(path)}: {not_a_file(path, LINK)}") from exc
        raise


def _lkind(fd: int, name: str) -> str:
    try:
        return _classify(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return MISSING
    except OSError as exc:
        return f"error: {exc.strerror or exc}"


def open_file(path: str | os.PathLike[str]) -> int:
    """An fd of the regular file `path`, opened for reading without following any link on the way
    and without blocking on a FIFO; TreeError when it is not a regular file."""
    p = Path(path)
    fd, name = _parent_fd(p)
    try:
        got = _lkind(fd, name)  # a device is not even opened (opening one can act)
        if got != FILE:
            if got == MISSING:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(p))
            raise TreeError(f"{show(p)}: {not_a_file(p, got)}")
        ffd = _open_in(fd, name, os.O_RDONLY | _NONBLOCK, p)
    finally:
        os.close(fd)
    try:
        if not stat.S_ISREG(os.fstat(ffd).st_mode):
            raise TreeError(f"{show(p)}: {not_a_file(p, OTHER)}")
        if _NONBLOCK:
            os.set_blocking(ffd, True)
    except BaseException:
        os.close(ffd)
        raise
    return ffd


def read_bytes(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of the regular file `path` (at most `limit`), read without following a link."""
    fd = open_file(path)
    with os.fdopen(fd, "rb") as fh:
        return fh.read() if limit is None else read_at_most(fh, limit)[:limit]


def read_at_most(fh: IO[bytes], limit: int) -> bytes:
    """What `fh.read(limit + 1)` returns (one byte past `limit` tells the caller the file is too
    large), without first allocating `limit + 1` bytes: `read(n)` reserves n bytes before it reads,
    which for a 1 MiB cap cost 30 µs a small file and for an 8 GiB cap 2 ms a file. What a regular
    file holds now (fstat) is read, then, if it grew meanwhile, the rest up to the same cap."""
    try:
        held = os.fstat(fh.fileno()).st_size - fh.tell()
    except (OSError, ValueError, AttributeError):
        held = -1
    if not 0 <= held < limit:  # not a regular file, or already past the cap: the plain bounded read
        return fh.read(limit + 1)
    data = fh.read(held + 1)
    if len(data) <= held:
        return data
    return data + fh.read(limit + 1 - len(data))


@contextmanager
def _dir_of(path: Path) -> Iterator[tuple[int, str]]:
    fd, name = _parent_fd(path)
    try:
        yield fd, name
    finally:
        os.close(fd)


def make_dir(path: str | os.PathLike[str]) -> None:
    """Create the folder `path` (its parent exists); nothing on the way may be a link."""
    p = Path(path)
    with _dir_of(p) as (fd, name):
        try:
            os.mkdir(name, 0o755, dir_fd=fd)
        except FileExistsError:
            if _lkind(fd, name) != DIR:
                raise TreeError(f"{show(p)}: exists and is not a folder ({not_a_file(p)})") from None


def make_dirs(path: str | os.PathLike[str], below: str | os.PathLike[str] | None = None) -> None:
    """`path` and its missing parents (below the existing folder `below`, else from the top): none
    of them may be a link (TreeError); nothing is created through one."""
    p = Path(path)
    if below is not None:
        cur = Path(below)
        for part in p.relative_to(cur).parts:
            cur = cur / part
            make_dir(cur)
        return
    for prefix in _prefixes(p):
        got = kind(prefix)
        if got == DIR:
            continue
        if got != MISSING:
            raise TreeError(f"{show(prefix)}: {not_a_file(prefix, got)}; proctor creates no folder through it")
        make_dir(prefix)


def open_output(path: str | os.PathLike[str], mode: str = "w") -> IO[Any]:
    """`path` opened for writing as a run's log (`mode` "w" text UTF-8 or "wb"): a regular file is
    truncated, a new one created; the last component is never followed nor opened when it is a link,
    FIFO, socket or device (TreeError naming it), so a file someone placed in an output folder cannot
    redirect proctor's write. The folders above are the user's and resolve as named."""
    p = Path(path)
    try:
        got = _classify(os.lstat(p).st_mode)
    except FileNotFoundError:
        got = MISSING
    if got not in (FILE, MISSING):
        raise TreeError(f"{show(p)}: {not_a_file(p, got)}; proctor writes a log only as a regular file: "
                        "remove it or choose another output folder")
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW | _CLOEXEC | _NONBLOCK, 0o644)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENXIO):  # became a link or a FIFO meanwhile
            raise TreeError(f"{show(p)}: {not_a_file(p)}; proctor writes a log only as a regular file") from exc
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise TreeError(f"{show(p)}: {not_a_file(p, OTHER)}; proctor writes a log only as a regular file")
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    if mode == "wb":
        return os.fdopen(fd, "wb")
    return os.fdopen(fd, "w", encoding="utf-8", newline="\n")


def clear_output(path: str | os.PathLike[str]) -> None:
    """Remove a stale log a run will not write this time (a regular file, or nothing there); a link,
    FIFO or device there is refused as `open_output` refuses it, never removed or followed."""
    p = Path(path)
    try:
        got = _classify(os.lstat(p).st_mode)
    except FileNotFoundError:
        return
    if got != FILE:
        raise TreeError(f"{show(p)}: {not_a_file(p, got)}; proctor writes a log only as a regular file: "
                        "remove it or choose another output folder")
    with suppress(FileNotFoundError):
        p.unlink()


def write_new(path: str | os.PathLike[str], data: bytes) -> None:
    """Create the file `path` (it must not exist, not even as a link) with `data`."""
    p = Path(path)
    with _dir_of(p) as (fd, name):
        try:
            ffd = _open_in(fd, name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, p)
        except FileExistsError:
            raise TreeError(f"{show(p)}: already exists; proctor does not overwrite it") from None
    with os.fdopen(ffd, "wb") as fh:
        fh.write(data)


def replace(path: str | os.PathLike[str], data: bytes) -> None:
    """Put a new file holding `data` at `path` (a regular file or nothing): written beside it, then
    renamed over it, so nothing is written through a link (symbolic or hard)."""
    p = Path(path)
    with _dir_of(p) as (fd, name):
        got = _lkind(fd, name)
        if got not in (FILE, MISSING):
            raise TreeError(f"{show(p)}: {not_a_file(p, got)}; proctor writes only regular files")
        import secrets  # here: a reader of a tree needs no random names (nor hashlib, which it loads)

        tmp = f".{name[:64]}.proctor-{secrets.token_hex(6)}"
        tfd = _open_in(fd, tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, p)
        try:
            with os.fdopen(tfd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with suppress(OSError):
                os.unlink(tmp, dir_fd=fd)
            raise


def remove_file(path: str | os.PathLike[str]) -> None:
    """Remove `path` when it is there (a link is removed itself, never what it points to)."""
    p = Path(path)
    with _dir_of(p) as (fd, name):
        if _lkind(fd, name) == DIR:
            raise TreeError(f"{show(p)}: a folder; proctor removes only files here")
        with suppress(FileNotFoundError):
            os.unlink(name, dir_fd=fd)


def new_folder(path: str | os.PathLike[str], what: str) -> Path:
    """Create the output folder `path`, which must not exist (not even as a link); its parents are
    made as the user named them. The folder returned has no link on it."""
    p = Path(path)
    if os.path.lexists(p):
        raise TreeError(f"{what} {show(p)}: already exists; give a new folder")
    if p.name in ("", ".", ".."):
        raise TreeError(f"{what} {show(p)}: give a new folder's name")
    parent = real_root(p.parent)
    try:
        parent.mkdir(parents=True, exist_ok=True)
        out = parent / p.name
        os.mkdir(out)  # never follows: a link put there meanwhile is EEXIST
    except FileExistsError:
        raise TreeError(f"{what} {show(p)}: already exists; give a new folder") from None
    except OSError as exc:
        raise TreeError(f"{what} {show(p)}: cannot create it ({exc.strerror or exc})") from exc
    return out


# --- walking -------------------------------------------------------------------------------------
@record(slots=True)
class Budget:
    """What one walk or copy may still visit and write."""

    entries: int = MAX_ENTRIES
    bytes: int = MAX_COPY_BYTES


@record(slots=True)
class Scan:
    """What a walk found: problems as (path, why), in walk order; `entries` visited."""

    root: Path
    problems: list[tuple[Path, str]] = field(default_factory=list)
    more: int = 0  # problems past MAX_PROBLEMS, counted only
    entries: int = 0
    stopped: str = ""  # why the walk stopped early ("" when it saw everything)
    kept_links: list[Path] = field(default_factory=list)

    def add(self, path: Path, why: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append((path, why))
        else:
            self.more += 1

    @property
    def ok(self) -> bool:
        return not self.problems and not self.stopped

    def first(self) -> str:
        """The first problem as one line (with how many more), for a refusal."""
        if self.problems:
            path, why = self.problems[0]
            n = len(self.problems) - 1 + self.more
            return f"{show(path)}: {why}" + (f" ({n} more problem(s) in {show(self.root)})" if n else "")
        return f"{show(self.root)}: {self.stopped}"


def _listing(folder: Path, most: int) -> list[os.DirEntry[str]]:
    """A folder's entries in name order; one past `most` at most are held (the caller's bound)."""
    out: list[os.DirEntry[str]] = []
    with os.scandir(folder) as it:
        for entry in it:
            out.append(entry)
            if len(out) > most:
                break
    return sorted(out, key=lambda e: e.name)


def _inside(path: str, root: str) -> bool:
    """Whether the resolved `path` is `root` or below it (both resolved)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _link_target(link: Path, root_real: str) -> tuple[str, str | None]:
    """(what the link holds, its resolved target relative to the root, or None when it resolves
    nowhere, loops or leaves the root)."""
    try:
        raw = os.readlink(link)
    except OSError:
        return "?", None
    try:
        target = os.path.realpath(link, strict=True)
    except (OSError, RuntimeError):
        return raw, None
    if not _inside(target, root_real):
        return raw, ""
    return raw, os.path.relpath(target, root_real)


def _link_problem(link: Path, rel: PurePath, root_real: str, links_ok_under: tuple[str, ...]) -> str | None:
    raw, target = _link_target(link, root_real)
    shown = printable(raw, 120)
    if target is None:
        return f"a symbolic link (-> {shown}) that resolves nowhere (a loop or a missing target); remove it"
    if target == "":
        return (
            f"a symbolic link (-> {shown}) to outside the tree; proctor reads nothing outside the tree it "
            "was given: put the file or folder itself here"
        )
    if rel.parts and rel.parts[0] in links_ok_under:
        return None
    return (
        f"a symbolic link (-> {shown}); the layout needs none and proctor follows none here: put the "
        "file or folder itself here"
    )


def scan(
    root: str | os.PathLike[str],
    *,
    links_ok_under: tuple[str, ...] = (),
    budget: Budget | None = None,
    skip: Callable[[PurePath], bool] | None = None,
) -> Scan:
    """Walk `root` without following a link: every link that may not stay (see the module), FIFO,
    socket, device and unreadable folder is a problem; the walk is bounded (MAX_ENTRIES, MAX_DEPTH).
    `skip(rel)` leaves a path (and what is below it) out."""
    base = Path(root)
    out = Scan(base)
    budget = budget or Budget()
    root_real = os.path.realpath(base)
    got = kind(base)
    if got != DIR:
        out.add(base, "not a folder" if got in (FILE, MISSING) else not_a_file(base, got))
        return out
    links: list[str] = []  # every link, relative to the root
    kept: list[tuple[Path, str]] = []  # (allowed link, its target relative to the root)
    stack: list[tuple[Path, PurePath, int]] = [(base, PurePath(), 0)]
    while stack:
        folder, rel, depth = stack.pop()
        try:
            entries = _listing(folder, budget.entries)
        except OSError as exc:
            out.add(folder, f"cannot be listed ({exc.strerror or exc})")
            continue
        below: list[tuple[Path, PurePath, int]] = []
        for entry in entries:
            erel = rel / entry.name if skip is not None else None
            if erel is not None and skip is not None and skip(erel):
                continue
            out.entries += 1
            budget.entries -= 1
            if budget.entries < 0:
                out.stopped = f"more than {MAX_ENTRIES} files and folders; proctor walks at most that many"
                return out
            try:  # the kind the folder's listing gives (d_type): a stat only where it gives none
                if entry.is_file(follow_symlinks=False):  # most entries: nothing more to look at
                    continue
                what = LINK if entry.is_symlink() else DIR if entry.is_dir(follow_symlinks=False) else (
                    _classify(entry.stat(follow_symlinks=False).st_mode))  # fmt: skip
            except OSError as exc:
                out.add(Path(entry.path), f"cannot be read ({exc.strerror or exc})")
                continue
            if what == FILE:  # named by a stat where the listing gave no kind
                continue
            path = Path(entry.path)
            erel = rel / entry.name if erel is None else erel
            if what == LINK:
                links.append(erel.as_posix())
                problem = _link_problem(path, erel, root_real, links_ok_under)
                if problem:
                    out.add(path, problem)
                else:
                    kept.append((path, _link_target(path, root_real)[1] or "."))
            elif what == OTHER:
                out.add(path, "a FIFO, socket or device, not a regular file; proctor never opens one: remove it")
            elif what == DIR:
                if depth + 1 >= MAX_DEPTH:
                    out.stopped = f"folders nested deeper than {MAX_DEPTH} levels; proctor walks no deeper"
                    return out
                below.append((path, erel, depth + 1))
        stack.extend(reversed(below))  # folders walked in name order, depth first
    _no_cycles(out, kept, sorted(links))
    return out


def _no_cycles(out: Scan, kept: list[tuple[Path, str]], links: list[str]) -> None:
    """Keep a link to a folder only when no link lies below that folder: following kept links then
    never meets another link, so no chain of them loops (a link to a folder above itself included)."""
    if not kept:
        return
    import bisect  # only a tree with links comes here

    for path, target in kept:
        inside = "" if target == "." else target + "/"
        i = bisect.bisect_left(links, inside)
        if target != "." and not os.path.isdir(path):  # a file: nothing below it
            out.kept_links.append(path)
        elif i < len(links) and links[i].startswith(inside):
            out.add(
                path,
                f"a symbolic link to a folder that holds a link itself ({show(links[i])}): a possible loop; "
                "link files or folders without links only",
            )
        else:
            out.kept_links.append(path)


def check_tree(root: str | os.PathLike[str], *, links_ok_under: tuple[str, ...] = ()) -> Scan:
    """`scan`, refused (TreeError naming the first problem) unless the tree is clean."""
    found = scan(root, links_ok_under=links_ok_under)
    if not found.ok:
        raise TreeError(found.first())
    return found


@record(frozen=True, slots=True)
class Fingerprint:
    """What a tree holds, in one digest: equal digests, the same names, kinds, sizes, times and link
    targets (a file rewritten in place at the same size within the same nanosecond is not seen)."""

    digest: str
    files: int  # regular files
    bytes: int  # their sizes, as stat gives them
    stopped: str = ""  # why the walk stopped early ("" when it saw everything)


def fingerprint(root: str | os.PathLike[str], *, budget: Budget | None = None) -> Fingerprint:
    """The digest of every entry below `root` (its relative name, kind, size, modification time in
    ns; a link's target text, never followed), walked in name order with `scan`'s bounds: a stat per
    entry, no file opened."""
    import hashlib

    base = Path(root)
    budget = budget or Budget()
    h = hashlib.blake2b(digest_size=20)
    files = size = 0
    stack: list[tuple[Path, str, int]] = [(base, "", 0)]
    while stack:
        folder, rel, depth = stack.pop()
        try:
            entries = _listing(folder, budget.entries)
        except OSError as exc:
            h.update(f"{rel}\0unreadable\0{exc.errno}\n".encode("utf-8", "surrogateescape"))
            continue
        below: list[tuple[Path, str, int]] = []
        for entry in entries:
            budget.entries -= 1
            if budget.entries < 0:
                stopped = f"more than {MAX_ENTRIES} files and folders; proctor walks at most that many"
                return Fingerprint(h.hexdigest(), files, size, stopped)
            erel = f"{rel}/{entry.name}" if rel else entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                h.update(f"{erel}\0gone\0{exc.errno}\n".encode("utf-8", "surrogateescape"))
                continue
            what = _classify(st.st_mode)
            extra = ""
            if what == LINK:
                with suppress(OSError):
                    extra = os.readlink(entry.path)
            elif what == FILE:
                files += 1
                size += st.st_size
            elif what == DIR:
                if depth + 1 >= MAX_DEPTH:
                    stopped = f"folders nested deeper than {MAX_DEPTH} levels; proctor walks no deeper"
                    return Fingerprint(h.hexdigest(), files, size, stopped)
                below.append((Path(entry.path), erel, depth + 1))
            line = f"{erel}\0{what}\0{st.st_size if what == FILE else 0}\0{st.st_mtime_ns}\0{extra}\n"
            h.update(line.encode("utf-8", "surrogateescape"))
        stack.extend(reversed(below))
    return Fingerprint(h.hexdigest(), files, size)


# --- copying -------------------------------------------------------------------------------------
def copy_file(src: str | os.PathLike[str], dst: str | os.PathLike[str], budget: Budget | None = None) -> int:
    """Copy the regular file `src` to the new file `dst`, following no link on either side; the
    bytes copied (within `budget`)."""
    budget = budget or Budget()
    s, d = Path(src), Path(dst)
    sfd = open_file(s)
    with os.fdopen(sfd, "rb") as fin:
        with _dir_of(d) as (fd, name):
            try:
                dfd = _open_in(fd, name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, d)
            except FileExistsError:
                raise TreeError(f"{show(d)}: already exists; proctor does not overwrite it") from None
        n = 0
        with os.fdopen(dfd, "wb") as fout:
            while block := fin.read(_BLOCK):
                n += len(block)
                budget.bytes -= len(block)
                if budget.bytes < 0:
                    raise TreeError(f"{show(s)}: the copy passed {MAX_COPY_BYTES} bytes; proctor copies no more")
                fout.write(block)
    return n


def copy_tree(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    links_ok_under: tuple[str, ...] = (),
    skip: Callable[[PurePath], bool] | None = None,
    budget: Budget | None = None,
) -> None:
    """Copy the folder `src` to the new folder `dst` (its parent exists): refused, before anything
    is written, when `scan` finds a problem; an allowed link is recreated as a relative link."""
    s, d = Path(src), Path(dst)
    budget = budget or Budget()
    if _inside(os.path.realpath(d), os.path.realpath(s)):
        raise TreeError(f"{show(d)}: inside the folder it would copy ({show(s)}); give a folder outside it")
    found = scan(s, links_ok_under=links_ok_under, skip=skip)
    if not found.ok:
        raise TreeError(found.first())
    root_real = os.path.realpath(s)
    kept = set(found.kept_links)
    make_dir(d)
    stack: list[tuple[Path, Path, PurePath]] = [(s, d, PurePath())]
    while stack:
        folder, out, rel = stack.pop()
        for entry in _listing(folder, budget.entries):
            erel = rel / entry.name
            if skip is not None and skip(erel):
                continue
            budget.entries -= 1
            if budget.entries < 0:
                raise TreeError(f"{show(s)}: more than {MAX_ENTRIES} files and folders; proctor copies at most that many")
            path, target = Path(entry.path), out / entry.name
            what = _classify(entry.stat(follow_symlinks=False).st_mode)
            if what == LINK and path in kept:
                _, to = _link_target(path, root_real)
                if not to:  # changed since the scan
                    raise TreeError(f"{show(path)}: {_link_problem(path, erel, root_real, ())}")
                up = os.path.relpath(os.path.join(root_real, to), os.path.join(root_real, str(rel)))
                with _dir_of(target) as (fd, name):
                    os.symlink(up, name, dir_fd=fd)
            elif what == DIR:
                make_dir(target)
                stack.append((path, target, erel))
            elif what == FILE:
                copy_file(path, target, budget)
            else:
                raise TreeError(f"{show(path)}: {not_a_file(path, what)}")


__all__ = [
    "DIR",
    "FILE",
    "LINK",
    "MAX_COPY_BYTES",
    "MAX_DEPTH",
    "MAX_ENTRIES",
    "MAX_NAME",
    "MISSING",
    "OTHER",
    "SAFE_NAME",
    "Budget",
    "Fingerprint",
    "Scan",
    "check_tree",
    "copy_file",
    "copy_tree",
    "fingerprint",
    "first_link",
    "is_dir",
    "is_file",
    "kind",
    "make_dir",
    "make_dirs",
    "new_folder",
    "not_a_file",
    "open_file",
    "parsed",
    "read_bytes",
    "reading",
    "real_root",
    "remove_file",
    "replace",
    "safe_name",
    "scan",
    "show",
    "write_new",
]
