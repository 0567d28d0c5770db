"""The command line every figure script shares: its ``data()`` parameters become options.

    python figures/position/pe_heatmap.py --out pe.svg --d-model 64 --n-positions 32
    python -m figures pe_heatmap --out pe.png --theme dark

Options, their types and ranges come from the figure contract (:mod:`.contract`), the
same that checks a page's ``?name=value``; a bad value or an unknown output format is
refused before anything is computed.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import contract

FORMATS = ("svg", "png", "pdf", "csv", "json", "md")


def _converter(param: contract.Param):
    def convert(text: str):
        try:
            return param._item(text, "--" + param.name.replace("_", "-"))
        except contract.ContractError as exc:
            raise argparse.ArgumentTypeError(str(exc).split(": ", 1)[-1]) from None

    convert.__name__ = param.type  # argparse names the type in its messages
    return convert


def parser_for(script: contract.Script) -> argparse.ArgumentParser:
    """An ``argparse`` parser for ``script``: ``--out``, ``--theme`` and one option a parameter."""
    default_ext = "md" if script.kind == "table" else "svg"
    formats = [f for f in FORMATS if script.kind == "figure" or f in ("csv", "json", "md")]
    p = argparse.ArgumentParser(
        prog=f"python {script.repo_path}",
        description=script.title,
        epilog=f"Formats: {', '.join('.' + f for f in formats)} (a {script.kind}).",
    )
    p.add_argument("--out", type=Path, default=Path(f"{script.name}.{default_ext}"),
                   help=f"output file; its suffix picks the format (default: {script.name}.{default_ext})")
    p.add_argument("--theme", choices=("light", "dark"), default="light", help="colour theme for images")
    if script.narrow:
        p.add_argument("--layout", choices=("wide", "narrow"), default="wide",
                       help="wide (a page or slide) or narrow (a phone: panels stacked)")
    for param in script.params.values():
        help_text = f"{param.describe()}; default: {param.default_src}"
        if param.type == "bool" and not param.sequence:
            p.add_argument(param.flag, dest=param.name, action=argparse.BooleanOptionalAction,
                           default=argparse.SUPPRESS, help=help_text)
        elif param.sequence:
            p.add_argument(param.flag, dest=param.name, nargs="+", type=_converter(param),
                           default=argparse.SUPPRESS, metavar=param.type.upper(), help=help_text)
        else:
            p.add_argument(param.flag, dest=param.name, type=_converter(param),
                           default=argparse.SUPPRESS, metavar=param.type.upper(), help=help_text)
    return p


def script_of(module) -> contract.Script:
    return contract.read_script(Path(module.__file__))


def run(module, argv=None) -> int:
    """Parse ``argv``, check it, compute ``module.data(**params)`` and write ``--out``."""
    from . import export

    script = script_of(module)
    parser = parser_for(script)
    args = vars(parser.parse_args(argv))
    out, theme, layout = args.pop("out"), args.pop("theme"), args.pop("layout", "wide")
    fmt = out.suffix.lstrip(".").lower()
    allowed = [f for f in FORMATS if script.kind == "figure" or f in ("csv", "json", "md")]
    if fmt not in allowed:
        what = f"{script.name} is a table: " if script.kind == "table" and fmt in FORMATS else ""
        parser.error(f"--out: {what}the file must end in one of .{', .'.join(allowed)}; got {out.name!r}")
    request = script.request({k: tuple(v) if isinstance(v, list) else v for k, v in args.items()},
                             where=script.name)
    try:
        data = module.data(**request.kwargs)
    except (ValueError, TypeError) as exc:  # a check inside data() on the parameters' values
        parser.error(str(exc))
    export.write(module, data, out, theme=theme, layout=layout)
    print(out)
    return 0


def main_for(module_name: str):
    """``main = cli.main_for(__name__)`` gives a figure script its ``main(argv=None)``."""

    def main(argv=None) -> int:
        return run(sys.modules[module_name], argv)

    main.__doc__ = f"Command line of {module_name}: see ``--help``."
    return main
