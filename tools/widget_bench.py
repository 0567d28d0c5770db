"""What the two live widgets' benches share (tools/bench_generator.py, tools/bench_bert_live.py):
finding a widget's payload the way its page names it, and running a measuring script in
headless Chromium on the page, once per CPU slowdown (CDP ``Emulation.setCPUThrottlingRate``)."""
from __future__ import annotations

import gzip
from pathlib import Path


def payload_file(site: Path, page: str, explorer: str) -> Path:
    """The payload of the widget ``explorer`` as ``page``'s HTML names it (``data-src``)."""
    html = (site / page / "index.html").read_text()
    start = html.index(f'data-explorer="{explorer}"')
    src = html[html.index('data-src="', start) + len('data-src="'):]
    return (site / page / src.split('"')[0].split("?")[0]).resolve()


def measure(site: Path, page: str, explorer: str, script: str, arg, rates) -> dict:
    """``{"raw", "gzip", "by_rate": {rate: script's result}}``: the payload's sizes, and ``script``
    evaluated with ``arg`` on ``page`` once its widget is ready, in a fresh tab per slowdown."""
    from playwright.sync_api import sync_playwright

    from tools.screenshots import ARGS, CHROMIUM, goto, serve

    body = payload_file(site, page, explorer).read_bytes()
    out = dict(raw=len(body), gzip=len(gzip.compress(body, 6)), by_rate={})
    server, base = serve(site)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for rate in rates:
                tab = browser.new_page()
                cdp = tab.context.new_cdp_session(tab)
                goto(tab, base + page + "/")
                tab.wait_for_selector(f".mha-explorer[data-explorer={explorer}] .mha-explorer-ui[data-ready]")
                cdp.send("Emulation.setCPUThrottlingRate", {"rate": rate})
                out["by_rate"][rate] = tab.evaluate(script, arg)
                tab.close()
            browser.close()
    finally:
        server.shutdown()
    return out
