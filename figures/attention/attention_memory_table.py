"""Memory of the full T x T score matrix, as a table: T, bytes in fp32, and sizes in fp32 and fp16.

At T = 8192 in fp32 one matrix takes 8192^2 x 4 = 268,435,456 bytes = 256 MiB. Page: attention.
"""
from __future__ import annotations

from figures._kit import cli
from figures._kit.export import markdown_table
from figures.attention.attention_memory import data  # noqa: F401  (the same numbers as the curve)


def _size(n: int) -> str:
    """``n`` bytes in the largest binary unit it fills, whole when it divides, else to one
    decimal, in exact decimal arithmetic (a float ``n / f`` holds 16 digits: 4e30 bytes read
    "3,725,290,298,461,914,136,576 GiB" for 3,725,290,298,461,914,062,500)."""
    import decimal

    for unit, f in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= f:
            if n % f == 0:
                return f"{n // f:,} {unit}"
            with decimal.localcontext(decimal.Context(prec=len(str(n)) + 40)):
                return f"{decimal.Decimal(n) / f:,.1f} {unit}"  # bare format: at least 1, beside the exact bytes
    return f"{n} B"


def table(data: dict) -> str:
    rows = [[f"{r['T']:,}", f"{r['fp32']:,}", _size(r["fp32"]), _size(r["fp16"])] for r in data["rows"]]
    n = data["batch"] * data["heads"]  # the matrices counted: one unless a batch or heads are asked for
    scores = "scores, fp32 (bytes)" if n == 1 else f"scores of {n:,} T×T matrices (batch × heads), fp32 (bytes)"
    return markdown_table(["T", scores, "fp32", "fp16"], rows, "rrrr")



main = cli.main_for(__name__)

if __name__ == "__main__":
    raise SystemExit(main())
