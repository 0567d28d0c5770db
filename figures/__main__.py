"""``python -m figures list`` and ``python -m figures NAME [options]``."""
from __future__ import annotations

import sys

from . import _cli, load, names, summary


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m figures list | python -m figures NAME [--out FILE] [params]")
        return 0 if argv else 2
    if argv[0] == "list":
        width = max(map(len, names()))
        for name in names():
            mod = load(name)
            kind = "table " if hasattr(mod, "table") else "figure"
            print(f"{name:<{width}}  {kind}  {summary(mod)}")
        return 0
    try:
        module = load(argv[0])
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return _cli.run(module, argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
