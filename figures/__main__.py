"""``python -m figures list`` and ``python -m figures NAME [options]``."""
from __future__ import annotations

import sys

from . import load, scripts
from ._kit import cli, contract


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m figures list | python -m figures NAME [--out FILE] [params]")
        return 0 if argv else 2
    if argv[0] == "list":
        found = scripts()
        width = max(map(len, found))
        for name, script in sorted(found.items(), key=lambda kv: (kv[1].chapter, kv[0])):
            print(f"{name:<{width}}  {script.chapter:<11} {script.kind:<6}  {script.title}")
        return 0
    try:
        module = load(argv[0])
    except contract.ContractError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return cli.run(module, argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
