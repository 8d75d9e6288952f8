"""Files only this user may read: created 0600 in folders 0700, whatever the umask.

The service's SQLite database (and its ``-journal``/``-wal``/``-shm`` files) and the reference
cache hold what a candidate must not see (sources, interviewer views, hidden seeds, expected
answers). A file made here is created with ``os.open(..., 0o600)`` and ``O_EXCL`` (never through a
symlink an attacker planted); a folder made here is ``chmod``-ed to 0700 after ``mkdir`` (which the
umask would otherwise widen). A file that already exists with group or other permission bits is
narrowed to 0600 (and the caller told, to log it), or refused with ``NotPrivate`` when this user
cannot change it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

FILE_MODE = 0o600
DIR_MODE = 0o700


class NotPrivate(OSError):
    """A file or folder that others may read or write and that this user cannot make private."""


def make_dirs(path: Path, *, fix_existing: bool) -> list[Path]:
    """Create ``path`` and its missing parents, each 0700. Returns the folders it created or narrowed.

    Args:
        fix_existing: narrow ``path`` itself to 0700 when it exists with group/other bits (a folder the
            grader owns, e.g. the reference cache); False leaves an existing folder's mode alone (the
            operator's, e.g. the folder of the database) but refuses one that others may write to
            without the sticky bit (they could replace the files in it).
    Raises:
        NotPrivate: see ``fix_existing``, or a folder whose mode cannot be changed.
    """
    path = Path(path)
    missing = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    changed = []
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(folder, DIR_MODE)
        changed.append(folder)
    if missing:
        return changed
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if fix_existing and mode & 0o077:
        try:
            os.chmod(path, DIR_MODE)
        except OSError as exc:
            raise NotPrivate(f"{path} is open to other users (mode {mode:04o}) and cannot be made 0700: "
                             f"{exc.strerror or exc}; chmod 700 it or choose another folder") from exc
        changed.append(path)
    elif not fix_existing and mode & 0o022 and not mode & stat.S_ISVTX:
        raise NotPrivate(f"{path} may be written by other users (mode {mode:04o}): they could replace the files "
                         "the service keeps there; choose a folder only you can write (chmod 700 it)")
    return changed


def ensure_file(path: Path, *, create: bool = True) -> str:
    """Make ``path`` a file only its owner can read and write.

    Returns:
        ``"created"`` (made 0600 now), ``"fixed"`` (it existed with group/other bits and is now 0600),
        ``"ok"`` (it existed, already private) or ``"absent"`` (it does not exist and ``create`` is False).
    Raises:
        NotPrivate: it exists, others may read it, and this user cannot change its mode.
        OSError: it cannot be created.
    """
    path = Path(path)
    if not path.exists():
        if not create:
            return "absent"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
        except FileExistsError:  # created meanwhile: check it like any existing one
            return ensure_file(path, create=False)
        os.fchmod(fd, FILE_MODE)  # the umask may have narrowed it further; never widened
        os.close(fd)
        return "created"
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if not mode & 0o077:
        return "ok"
    try:
        os.chmod(path, FILE_MODE)
    except OSError as exc:
        raise NotPrivate(f"{path} can be read by other users (mode {mode:04o}) and cannot be made 0600: "
                         f"{exc.strerror or exc}; chmod 600 it (or move it away) and start again") from exc
    return "fixed"
