"""What one build knows, in one object that the build's config carries.

MkDocs loads each hook file once per process (``mkdocs serve`` keeps them between rebuilds)
and hands every event of a build that build's ``config``, a fresh one per rebuild. So a
build's state lives on its config: :func:`of` returns the config's :class:`Build`, made on
first use, and each hook keeps its part of it as one object of its own state class
(``of(config).step(FigureState)``). Nothing a build learnt can reach the next build, whatever
a hook forgets to reset, and no hook module keeps state of its own (a test holds them to it).

What the process keeps from one build to the next on purpose (results whose inputs did not
change, the engine's hashes under serve) is :data:`_serve.SESSION`.
"""
from __future__ import annotations

import _serve

ATTRIBUTE = "_mha_build"


class Build:
    """One build's state: each hook's state object, by its class."""

    def __init__(self):
        self._steps: dict = {}

    def step(self, cls):
        """This build's ``cls()``, made on first use (a hook's state class takes no arguments)."""
        key = (cls.__module__, cls.__qualname__)
        if key not in self._steps:
            self._steps[key] = cls()
        return self._steps[key]

    def find(self, cls):
        """This build's ``cls`` object if a hook made one, else ``None``."""
        return self._steps.get((cls.__module__, cls.__qualname__))

    def once(self, key, compute):
        """``compute()`` the first time a hook of this build asks for ``key``, the same value after:
        what several hooks read and the build does not change (the figure scripts, discovered
        once instead of by the figures and the numbering hooks each)."""
        key = ("once", key)
        if key not in self._steps:
            self._steps[key] = compute()
        return self._steps[key]


def of(config) -> Build:
    """The :class:`Build` of the build ``config`` belongs to."""
    build = config.__dict__.get(ATTRIBUTE)
    if build is None:
        build = Build()
        setattr(config, ATTRIBUTE, build)
    return build


def current() -> Build | None:
    """The build in progress, for the events MkDocs gives no config (``on_build_error``)."""
    config = _serve.SESSION.config()
    return config.__dict__.get(ATTRIBUTE) if config is not None else None
