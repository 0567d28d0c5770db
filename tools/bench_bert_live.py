"""The live real model's numbers for `make bench` (issue 29): its payload's size (raw and gzip), and
in headless Chromium the time to fetch and unpack it from the local server, and the forward pass
for 16 and 64 tokens, at full speed and under Lighthouse's 4x CPU slowdown (CDP
``Emulation.setCPUThrottlingRate``); with the whole site's size with and without the payloads a
page fetches only when the reader asks (this model's and the live generator's).

    python -m tools.bench_bert_live SITE_DIR      # these rows alone, on a built site

The page's own code runs (``window.mhaBertLive.forward`` on the model the widget loads, through
``ui.loadModel()``). The inputs are the tokens of a check sentence of
figures/real_model/bert_live.py cut to 16 and to 64 tokens ([SEP] last). Each forward time is the
median (and the best) of 5 runs after 2 warm-up runs.
"""
from __future__ import annotations

import sys
from pathlib import Path

from tools import widget_bench

ROOT = Path(__file__).resolve().parents[1]
LENGTHS = (16, 64)
RATES = (1, 4)
#: DESIGN.md's targets for the real model (the forward pass under the 4x slowdown) and the site.
TARGET_PAYLOAD, TARGET_16_MS, TARGET_SITE = 25e6, 300.0, 25e6

_MEASURE = """async ([lengths, text]) => {
  const ui = document.querySelector('.mha-explorer[data-explorer=bert_live] .mha-explorer-ui');
  const t0 = performance.now();
  const m = await ui.loadModel();
  const loadMs = performance.now() - t0;
  const B = window.mhaBertLive, ids = B.tokenize(m.tokenizer, text).ids;
  const rows = [];
  for (const T of lengths) {
    const input = [...ids.slice(0, T - 1), ids[ids.length - 1]];  // the first T - 1 tokens, then [SEP]
    for (let i = 0; i < 2; i++) B.forward(m, input);
    const ms = [];
    for (let i = 0; i < 5; i++) { const t = performance.now(); B.forward(m, input); ms.push(performance.now() - t); }
    ms.sort((a, b) => a - b);
    rows.push({T: input.length, median: ms[2], best: ms[0]});
  }
  return {loadMs, rows};
}"""


def payload_file(site: Path) -> Path:
    """The live model's payload as the viewer page names it (``data-src``)."""
    return widget_bench.payload_file(site, "viewer", "bert_live")


def on_request_payloads(site: Path) -> dict:
    """Files a page fetches only when the reader asks (a widget's model), by site path: this model's
    payload and the live generator's."""
    from tools import bench_generator

    return {str(p.relative_to(site.resolve())): p.stat().st_size
            for p in (payload_file(site), bench_generator.payload_file(site))}


def site_sizes(site: Path) -> tuple[int, dict]:
    """The whole site's bytes, and the on-request payloads' bytes by path."""
    total = sum(f.stat().st_size for f in site.rglob("*") if f.is_file())
    return total, on_request_payloads(site)


def _long_text() -> str:
    from figures.real_model.bert_live import CHECK_SENTENCES

    return max(CHECK_SENTENCES, key=len)  # the 64-token one


def measure(site: Path, lengths=LENGTHS, rates=RATES) -> dict:
    """Sizes and timings: ``{"raw", "gzip", "by_rate": {rate: _MEASURE's result}}``."""
    return widget_bench.measure(site, "viewer", "bert_live", _MEASURE, [list(lengths), _long_text()], rates)


def rows(site: Path) -> list[tuple]:
    """``(measure, value, target, ok)`` rows in bench.py's table."""
    m = measure(site)
    total, payloads = site_sizes(site)
    without = total - sum(payloads.values())
    out = [("live real model: payload, raw / gzip", f"{m['raw'] / 1e6:.2f} MB / {m['gzip'] / 1e6:.2f} MB", "<= 25 MB",
            m["raw"] <= TARGET_PAYLOAD)]
    for rate, r in m["by_rate"].items():
        slow = f", CPU {rate}x slower" if rate != 1 else ""
        out.append((f"live real model: fetched from the local server and unpacked{slow}", f"{r['loadMs']:.0f} ms", "",
                    None))
        for row in r["rows"]:
            target = rate == 4 and row["T"] == 16
            out.append((f"live real model: forward pass, {row['T']} tokens{slow}, median (best) of 5",
                        f"{row['median']:.0f} ({row['best']:.0f}) ms", "<= 300 ms" if target else "",
                        row["median"] <= TARGET_16_MS if target else None))
    out.append(("whole site, without the payloads fetched on request", f"{without / 1e6:.1f} MB", "<= 25 MB",
                without <= TARGET_SITE))
    for path, size in sorted(payloads.items()):
        out.append((f"  payload fetched on request: {path}", f"{size / 1e6:.2f} MB", "", None))
    out.append(("whole site, with them", f"{total / 1e6:.1f} MB", "", None))
    return out


def main(argv=None) -> int:
    from tools.bench_generator import print_rows

    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        sys.exit("usage: python -m tools.bench_bert_live SITE_DIR (a built site)")
    print_rows(rows(Path(argv[0])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
