"""Text files the package writes whole: the new contents or the old, never a part."""

from __future__ import annotations

import os
import pathlib
import threading


def write_atomically(path: str | os.PathLike[str], text: str) -> None:
    """PATH holds TEXT or what it held before, never a part (temp file, then rename)."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8", newline="")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
