"""One proctor process owns an output folder at a time (issue 30 §5).

Two `proctor run -o SAME` at once each reported their usual verdict while the folder held both runs'
logs interleaved. Every command that writes a run folder (run, audit, sweep, demo, accuracy runs,
submission package) and the engine itself (`run_test`, so the Python API too) hold the folder's
lock while they write: a `.proctor.lock` file in it, opened without following links, locked with
flock(2) and holding the owner's pid and command. The kernel drops the lock when the process ends,
however it ends (SIGKILL and out-of-memory included), so a stale file never blocks anyone; the file
is removed on a normal release. A second owner is refused at once, with a ConfigError (exit 2)
naming the first one's pid. Nested holds by one process (a command, then the engine it runs) share
the lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from proctor.errors import ConfigError
from proctor.typed_records import record

LOCK_NAME = ".proctor.lock"
_MAX_OWNER_BYTES = 512  # what is read of another owner's lock file
_ATTEMPTS = 8  # a release (unlink) racing our open: retry on the new file


class FolderInUse(ConfigError):
    """Another process owns the output folder."""

    def __init__(self, folder: Path, owner: str, pid: int | None) -> None:
        who = f"{owner} (pid {pid})" if pid is not None else f"{owner} (pid not yet written)"
        super().__init__(
            f"{folder} is in use by {who}; wait for it to end or choose another output folder (-o)"
        )
        self.folder, self.owner, self.pid = folder, owner, pid


@record(slots=True)
class _Held:
    fd: int
    path: Path
    depth: int


_held: dict[tuple[int, int], _Held] = {}  # (st_dev, st_ino) of the folder -> this process's lock
_guard = threading.Lock()


def default_owner() -> str:
    """`proctor run`, `proctor audit`, ... from the command line, else the program's name."""
    argv = [a for a in sys.argv[1:3] if not a.startswith("-")]
    prog = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    if prog in ("proctor", "__main__.py", "-m") and argv:
        return "proctor " + " ".join(argv[:2] if argv[0] in ("submission", "training") else argv[:1])
    return prog or "python"


def _read_owner(path: Path) -> tuple[str, int | None]:
    """(command, pid) another owner wrote; tolerant of a file being written or made by anyone."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return "another process", None
    try:
        raw = os.read(fd, _MAX_OWNER_BYTES)
    finally:
        os.close(fd)
    lines = raw.decode("utf-8", "replace").splitlines()
    pid = int(lines[0]) if lines and lines[0].strip().isdigit() and len(lines[0]) < 12 else None
    owner = "".join(c for c in (lines[1] if len(lines) > 1 else "") if c.isprintable())[:80]
    return owner or "another process", pid


def _acquire(folder: Path, owner: str) -> tuple[int, Path]:
    path = folder / LOCK_NAME
    for _ in range(_ATTEMPTS):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ConfigError(f"{path}: is a link; remove it (proctor's lock file is a plain file)") from None
            raise
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            who, pid = _read_owner(path)
            raise FolderInUse(folder, who, pid) from None
        except BaseException:
            os.close(fd)
            raise
        try:  # the previous owner may have removed the file between our open and our lock
            same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n{owner}\n".encode())
            return fd, path
        os.close(fd)
    raise ConfigError(f"{path}: could not take the output folder's lock (it kept changing); try again")


@contextlib.contextmanager
def owned(folder: str | os.PathLike[str], owner: str | None = None) -> Iterator[Path]:
    """Hold `folder` (made if missing) for this process while the block runs; FolderInUse (a
    ConfigError: exit 2) when another process holds it. Re-entrant within one process."""
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    st = path.stat()
    key = (st.st_dev, st.st_ino)
    with _guard:
        mine = _held.get(key)
        if mine is not None:
            mine.depth += 1
        else:
            fd, lock_path = _acquire(path, owner or default_owner())
            mine = _held[key] = _Held(fd, lock_path, 1)
    try:
        yield path
    finally:
        with _guard:
            mine.depth -= 1
            if mine.depth == 0:
                del _held[key]
                with contextlib.suppress(OSError):  # unlink while holding: a waiter then retries
                    os.unlink(mine.path)
                os.close(mine.fd)


def check_free(folder: str | os.PathLike[str]) -> None:
    """Refuse now (FolderInUse) when another process owns `folder`; takes nothing and creates no folder.
    For a command that builds things (a SUT) before it writes: it says so before building them."""
    path = Path(folder)
    if not path.is_dir() or not (path / LOCK_NAME).exists():
        return
    with owned(path):
        pass


__all__ = ["LOCK_NAME", "FolderInUse", "check_free", "default_owner", "owned"]
