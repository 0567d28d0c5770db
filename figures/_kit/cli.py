"""The command line every figure script shares: its ``data()`` parameters become options.

    python -m figures pe_heatmap --out pe.svg --d-model 64 --n-positions 32
    python -m figures pe_heatmap --out pe.png --theme dark
    python figures/position/pe_heatmap.py --out pe.svg      (in the project's folder)

Options, their types and ranges come from the figure contract (:mod:`.contract`), the
same that checks a page's ``?name=value``: a value is read with the parameter's own
:meth:`~.contract.Param.convert`, so ``--theta none`` means what ``?theta=none`` means on a
page, and every command line the site prints (:func:`.contract.cli_line`) reads back as the
request it was made from (:func:`parse`). A bad value, an option given twice or an unknown
output format is refused before anything is computed; ``--out`` may name a folder that does
not exist yet (it is made).
"""
from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from pathlib import Path

from . import contract

FORMATS = ("svg", "png", "pdf", "csv", "json", "md")


def _given_once(parser, namespace, action, option_string) -> None:
    """Refuse an option given twice (``--seed 1 --seed 2``, ``--causal --no-causal``), as a
    page refuses a parameter given twice: the last one would win silently."""
    given = namespace.__dict__.setdefault("_given", {})
    if action.dest in given:
        first = "" if given[action.dest] == option_string else f" (first as {given[action.dest]})"
        parser.error(f"argument {option_string}: given twice{first}; give each option once")
    given[action.dest] = option_string


class _Once(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        _given_once(parser, namespace, self, option_string)
        setattr(namespace, self.dest, values)


class _OnceBool(argparse.BooleanOptionalAction):
    def __call__(self, parser, namespace, values, option_string=None):
        _given_once(parser, namespace, self, option_string)
        super().__call__(parser, namespace, values, option_string)


#: A negative number as a command line writes one: -3, -0.5, -.5, -1e3, -1.5E-05, -inf.
NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-inf(inity)?$", re.IGNORECASE)


def _prog(script: contract.Script) -> str:
    return " ".join(contract.command(script))


def parser_for(script: contract.Script, prog: str | None = None) -> argparse.ArgumentParser:
    """An ``argparse`` parser for ``script``: ``--out``, ``--theme`` and one option a parameter.
    Values stay text here; :func:`parse` converts them with the contract."""
    default_ext = "md" if script.kind == "table" else "svg"
    formats = [f for f in FORMATS if script.kind == "figure" or f in ("csv", "json", "md")]
    p = argparse.ArgumentParser(
        prog=prog or _prog(script),
        description=script.title,
        epilog=f"Formats: {', '.join('.' + f for f in formats)} (a {script.kind}).",
        allow_abbrev=False,  # --d would be --d-model today and ambiguous tomorrow
    )
    # argparse reads "-1e3" and "-1e-05" (the way Python writes small floats) as unknown options:
    # every negative number is a value here, since no option starts with a digit
    p._negative_number_matcher = NEGATIVE_NUMBER
    p.add_argument("--out", type=Path, action=_Once, default=Path(f"{script.name}.{default_ext}"),
                   help=f"output file; its suffix picks the format; a missing folder is made "
                        f"(default: {script.name}.{default_ext})")
    p.add_argument("--theme", choices=("light", "dark"), action=_Once, default="light", help="colour theme for images")
    if script.narrow:
        p.add_argument("--layout", choices=("wide", "narrow"), action=_Once, default="wide",
                       help="wide (a page or slide) or narrow (a phone: panels stacked)")
    for param in script.params.values():
        help_text = f"{param.describe()}{'; none lets the script choose' if param.optional else ''}; " \
                    f"default: {param.default_src}"
        metavar = param.type.upper()
        if param.type == "bool" and not param.sequence and not param.optional:
            p.add_argument(param.flag, dest=param.name, action=_OnceBool, default=argparse.SUPPRESS, help=help_text)
        elif param.sequence:
            p.add_argument(param.flag, dest=param.name, nargs="+", action=_Once, default=argparse.SUPPRESS,
                           metavar=metavar, help=help_text)
        else:
            p.add_argument(param.flag, dest=param.name, action=_Once, default=argparse.SUPPRESS,
                           metavar=metavar, help=help_text)
    return p


def _value(param: contract.Param, raw):
    """``raw`` (text, or a list of texts for a sequence) as the parameter's canonical value:
    :meth:`Param.convert`, as for a page; ``none`` alone is ``None`` for an optional parameter."""
    if isinstance(raw, list) and param.optional and len(raw) == 1 and raw[0].strip().lower() == "none":
        raw = raw[0]
    return param.convert(raw, param.flag)


def parse(script: contract.Script, argv, prog: str | None = None):
    """``(request, out, theme, layout)`` from a command line's options (``argv`` after the
    command itself); argparse's exit (status 2, a message naming the option) for anything
    wrong, before any work."""
    parser = parser_for(script, prog)
    args = vars(parser.parse_args(argv))
    args.pop("_given", None)
    out, theme, layout = args.pop("out"), args.pop("theme"), args.pop("layout", "wide")
    fmt = out.suffix.lstrip(".").lower()
    allowed = [f for f in FORMATS if script.kind == "figure" or f in ("csv", "json", "md")]
    if fmt not in allowed:
        what = f"{script.name} is a table: " if script.kind == "table" and fmt in FORMATS else ""
        parser.error(f"--out: {what}the file must end in one of .{', .'.join(allowed)}; got {out.name!r}")
    params = {}
    for name, raw in args.items():
        try:
            params[name] = _value(script.params[name], raw)
        except contract.ContractError as exc:
            parser.error(f"argument {exc}")
    return script.request(params, where=script.name), out, theme, layout


def run(module, argv=None, prog: str | None = None) -> int:
    """Parse ``argv``, check it, compute ``module.data(**params)`` and write ``--out``: the same
    bytes the site's build writes for the same request (the SVG's ids are salted by the
    request's file name, as the build salts them)."""
    from . import export

    script = script_of(module)
    request, out, theme, layout = parse(script, argv, prog)
    parser = parser_for(script, prog)
    if out.is_dir():
        example = out / f"{script.name}.{'svg' if script.kind == 'figure' else 'md'}"
        parser.error(f"--out: {str(out)!r} is a folder; name the file to write in it, e.g. {example}")
    try:
        data = module.data(**request.kwargs)
    except (ValueError, TypeError) as exc:  # a check inside data() on the parameters' values
        parser.error(str(exc))
    gaps = contract.not_finite(data, script.non_finite)
    if gaps:  # the build refuses it too: the same data, the same message
        parser.error(contract.not_finite_message(script, gaps))
    if not out.parent.is_dir():
        try:
            out.parent.mkdir(parents=True)
        except OSError as exc:
            parser.error(f"--out: cannot make the folder {str(out.parent)!r} for {out.name!r}: {exc.strerror or exc}")
    export.write(module, data, out, theme=theme, layout=layout,
                 salt=export.salt_for(request.stem, theme, layout), alt=described(script, request, module))
    print(out)
    return 0


def described(script: contract.Script, request: contract.Request, module) -> str:
    """What a figure drawn for ``request`` shows, in words: its title at its default parameters
    (the docstring's first line names them: "... for d_head = 128"), else its name and the
    parameters it was drawn with, which the title would contradict (pass thirty-seven)."""
    import inspect

    def same(value, default) -> bool:
        default = tuple(default) if isinstance(default, list) else default
        return type(value) is type(default) and value == default if value is not None else default is None

    defaults = {n: p.default for n, p in inspect.signature(module.data).parameters.items()}
    changed = [(n, v) for n, v in request.kwargs.items() if not (n in defaults and same(v, defaults[n]))]
    if not changed:
        return script.title
    return f"{script.name}, drawn with " + ", ".join(f"{n} = {script.params[n].text(v)}" for n, v in changed)


def script_of(module) -> contract.Script:
    """``module``'s contract; a script whose data() is another's (``data_from``) takes that
    script's parameters, as contract.discover gives them to a page (a table of
    attention_memory's numbers took ``batch`` on a page and refused ``--batch`` here)."""
    script = contract.read_script(Path(module.__file__))
    if script.data_from:
        source = contract.read_script(Path(sys.modules[module.data.__module__].__file__))
        script = dataclasses.replace(script, params=source.params)
    return script


def main_for(module_name: str):
    """``main = cli.main_for(__name__)`` gives a figure script its ``main(argv=None)``."""

    def main(argv=None) -> int:
        # run as a file (python figures/position/pe_heatmap.py): its usage names that file
        prog = f"python {sys.argv[0]}" if module_name == "__main__" and argv is None else None
        return run(sys.modules[module_name], argv, prog)

    main.__doc__ = f"Command line of {module_name}: see ``--help``."
    return main
