"""Bounded reads of the files a reader hands kvlab (config.json, engine logs, standard input).

A file is checked before it is opened: only a regular file is read (a FIFO would block, a device
such as /dev/zero never ends, a directory is no text), and only up to a limit: the size is checked
first and at most `limit + 1` bytes are read, so a file that grows meanwhile is still refused.
Every refusal is a ValueError that names the file and what is wrong with it.

>>> read_text("/dev/zero", 1024, "config")
Traceback (most recent call last):
...
ValueError: config '/dev/zero': a character device, not a regular file; give the path of a file
"""

from __future__ import annotations

import os
import stat
import sys

from kvlab.inputs import short_repr

CHUNK_BYTES = 64 * 1024  # standard input is read in pieces of this size, up to the limit
SHOWN_PATH_CHARS = 200  # a path in an error is shown up to this length
KINDS = {
    stat.S_ISDIR: "a directory",
    stat.S_ISFIFO: "a named pipe (FIFO)",
    stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device",
    stat.S_ISSOCK: "a socket",
}


def _name(path) -> str:
    return short_repr(str(path), SHOWN_PATH_CHARS)


def _too_large(what: str, where: str, limit: int) -> ValueError:
    return ValueError(f"{what} {where}: larger than the {limit:,} bytes kvlab reads")


def read_file_bytes(path, limit: int, what: str) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them; else a ValueError naming it."""
    where = _name(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ValueError(f"{what} {where}: the file does not exist") from None
    except (OSError, ValueError) as exc:  # name too long, permission denied, a NUL in the name
        raise ValueError(f"{what} {where}: cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in KINDS.items() if test(info.st_mode)), "not a file")
        raise ValueError(f"{what} {where}: {kind}, not a regular file; give the path of a file")
    if info.st_size > limit:
        raise _too_large(what, where, limit)
    try:
        # O_NONBLOCK: should the path have become a FIFO since the stat, the open does not wait for a writer
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise ValueError(f"{what} {where}: not a regular file; give the path of a file")
            data = f.read(limit + 1)
    except OSError as exc:
        raise ValueError(f"{what} {where}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise _too_large(what, where, limit)
    return data


def read_stdin_bytes(limit: int, what: str) -> bytes:
    """Standard input, read in chunks up to `limit` bytes; more is a ValueError."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise ValueError(f"{what} from standard input: there is no standard input to read")
    chunks, total = [], 0
    while total <= limit:
        chunk = stream.read(min(CHUNK_BYTES, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > limit:
        raise _too_large(what, "from standard input", limit)
    return b"".join(chunks)


def decode_text(data: bytes, what: str, where: str, lenient: bool = False) -> str:
    """UTF-8 text (a byte-order mark is dropped, as engines read it); else a ValueError naming `where`.

    `lenient`: bytes that are not UTF-8 become U+FFFD instead (a log's stray bytes do not matter)."""
    if lenient:
        return data.decode("utf-8-sig", errors="replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        utf16 = " (it looks like UTF-16)" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else ""
        raise ValueError(
            f"{what} {where}: not UTF-8 text{utf16}: byte {exc.start:,} cannot be read; save it as UTF-8"
        ) from None


def read_text(path, limit: int, what: str, lenient: bool = False) -> str:
    """The UTF-8 text of the regular file at `path` ('-': standard input), at most `limit` bytes."""
    if str(path) == "-":
        return decode_text(read_stdin_bytes(limit, what), what, "from standard input", lenient)
    return decode_text(read_file_bytes(path, limit, what), what, _name(path), lenient)
