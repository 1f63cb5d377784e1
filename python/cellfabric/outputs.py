"""Output paths checked before any work starts.

A command that writes results checks its output path first: a folder it writes into
(:func:`prepare_folder`) or a file it writes (:func:`prepare_file`). The check creates what is
missing, so that a folder that cannot be created or written fails at once, and returns the folders
it created; a command that then fails on its input takes them back with :func:`remove_created`,
leaving nothing behind. Each problem is a ``ScenarioError`` of one line that starts with the
option and the path (``--out results/x: ...``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from cellfabric._core import ScenarioError

PROBE = ".cellfabric-write-check"


def prepare_folder(path: str | Path, label: str | None = None) -> list[Path]:
    """Checks that files can be written into folder ``path``, creating it and its missing parents;
    returns the folders created, outermost first. ``label`` starts the message of a problem
    (default ``--out PATH``)."""
    label = label or f"--out {path}"
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise ScenarioError(f"{label}: is a file; expected a folder (or a path where one can be created)")
    _no_file_in_the_way(folder, label)
    created = _missing(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / PROBE
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        remove_created(created)
        raise ScenarioError(f"{label}: cannot write there ({error.strerror or error})") from None
    return created


def prepare_file(path: str | Path, label: str | None = None) -> list[Path]:
    """Checks that file ``path`` can be written (it is not a folder, and its folder can be created
    and written); returns the folders created, outermost first."""
    label = label or f"--out {path}"
    target = Path(path)
    if target.is_dir():
        raise ScenarioError(f"{label}: is a folder; expected the path of a file")
    return prepare_folder(target.parent, label)


def remove_created(created: Iterable[Path]) -> None:
    """Removes the folders a check created, innermost first, each only if it is still empty."""
    for folder in reversed(list(created)):
        try:
            folder.rmdir()
        except OSError:
            return  # something was written there: it stays, and so do the folders around it


def _missing(folder: Path) -> list[Path]:
    """The folders of ``folder``'s path that do not exist yet, outermost first."""
    missing = []
    for part in (folder, *folder.parents):
        if os.path.lexists(part):
            break
        missing.append(part)
    return missing[::-1]


def _no_file_in_the_way(folder: Path, label: str) -> None:
    """Fails if a file, not a folder, stands where ``folder``'s path needs a folder."""
    for part in folder.parents:
        if os.path.lexists(part):
            if not part.is_dir():
                raise ScenarioError(f"{label}: {part} is a file, so no folder can be created under it")
            return
