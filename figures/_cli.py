"""The command line every figure script shares: its ``data()`` parameters become options.

    python figures/pe_heatmap.py --out pe.svg --d-model 64 --n-positions 32
    python -m figures pe_heatmap --out pe.png --theme dark
"""
from __future__ import annotations

import argparse
import inspect
from pathlib import Path

from . import _export


def _option_type(default):
    if isinstance(default, bool):
        return None
    if isinstance(default, int):
        return int
    if isinstance(default, float):
        return float
    return str


def parser_for(module) -> argparse.ArgumentParser:
    name = module.__name__.rsplit(".", 1)[-1]
    doc = (module.__doc__ or "").strip()
    kind = "table" if hasattr(module, "table") else "figure"
    default_ext = "md" if kind == "table" else "svg"
    p = argparse.ArgumentParser(
        prog=f"python figures/{name}.py",
        description=doc.splitlines()[0] if doc else name,
        epilog=f"Formats: {', '.join('.' + f for f in _export.ALL_FORMATS)} (a {kind}).",
    )
    p.add_argument("--out", type=Path, default=Path(f"{name}.{default_ext}"),
                   help=f"output file; its suffix picks the format (default: {name}.{default_ext})")
    p.add_argument("--theme", choices=("light", "dark"), default="light", help="colour theme for images")
    for pname, param in inspect.signature(module.data).parameters.items():
        if param.default is inspect.Parameter.empty:
            continue
        flag = "--" + pname.replace("_", "-")
        if isinstance(param.default, bool):
            p.add_argument(flag, dest=pname, action=argparse.BooleanOptionalAction, default=param.default)
        elif isinstance(param.default, (tuple, list)):
            item = _option_type(param.default[0]) if param.default else str
            p.add_argument(flag, dest=pname, nargs="+", type=item, default=param.default,
                           help=f"default: {' '.join(map(str, param.default))}")
        else:
            p.add_argument(flag, dest=pname, type=_option_type(param.default), default=param.default,
                           help=f"default: {param.default}")
    return p


def run(module, argv=None) -> int:
    """Parse ``argv``, compute ``module.data(**params)`` and write ``--out``."""
    args = vars(parser_for(module).parse_args(argv))
    out, theme = args.pop("out"), args.pop("theme")
    for k, v in args.items():
        if isinstance(v, list):
            args[k] = tuple(v)
    data = module.data(**args)
    _export.write(module, data, out, theme=theme)
    print(out)
    return 0


def main_for(module_name: str):
    """``main = _cli.main_for(__name__)`` gives a figure script its ``main(argv=None)``."""
    import sys

    def main(argv=None) -> int:
        return run(sys.modules[module_name], argv)

    main.__doc__ = f"Command line of {module_name}: see ``--help``."
    return main
