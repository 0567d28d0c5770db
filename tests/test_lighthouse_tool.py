"""tools/lighthouse.py (`make lighthouse`): how it picks the run it reports and the pages it
measures, and that it serves a site compressed the way a static host does. Lighthouse itself
is a benchmark and is not run here."""
from __future__ import annotations

import gzip
import sys
import urllib.request

from helpers import ROOT

from tools import lighthouse  # noqa: E402


def _run(perf, **extra):
    return {"performance": perf, "accessibility": 100, "best-practices": 100, "seo": 100,
            "cls": 0.0, "lcp": 2.0, "failing": [], **extra}


def test_the_reported_run_is_the_median_by_performance_with_the_spread():
    runs = [_run(91, tag="a"), _run(64, tag="b"), _run(83, tag="c")]
    best = lighthouse.median_run(runs)
    assert best["tag"] == "c" and best["performance"] == 83
    assert sorted(best["perf_runs"]) == [64, 83, 91]
    # an even count reports the lower middle run, never an average no run produced
    assert lighthouse.median_run([_run(90), _run(70), _run(80), _run(60)])["performance"] == 70
    assert lighthouse.median_run([_run(77)])["performance"] == 77


def test_failed_runs_are_left_out_and_all_failed_reports_the_error():
    runs = [{"error": "timed out after 300 s"}, _run(88, tag="ok"), {"error": "boom"}]
    best = lighthouse.median_run(runs)
    assert best["tag"] == "ok" and best["perf_runs"] == [88]
    assert lighthouse.median_run([{"error": "x"}, {"error": "last"}]) == {"error": "last"}


def test_runs_below_one_are_refused(capsys):
    try:
        lighthouse.main(["--runs", "0"])
    except SystemExit as exc:
        assert exc.code == 2
    else:
        raise AssertionError("--runs 0 was accepted")
    assert "--runs must be at least 1, got 0" in capsys.readouterr().err


def test_page_names_cover_every_page_but_print_and_the_404(tmp_path):
    for rel in ("", "rope/", "labs/lab1_mha/", "print/", "scripts/pe_heatmap/"):
        (tmp_path / rel).mkdir(parents=True, exist_ok=True)
        (tmp_path / rel / "index.html").write_text("<html></html>")
    (tmp_path / "404.html").write_text("<html></html>")
    (tmp_path / "scripts" / "alibi_slopes").mkdir(parents=True)
    (tmp_path / "scripts" / "alibi_slopes" / "index.html").write_text("<html></html>")
    urls = lighthouse.page_urls(tmp_path)
    assert urls == {"home": "", "labs_lab1_mha": "labs/lab1_mha/", "rope": "rope/",
                    "scripts_alibi_slopes": "scripts/alibi_slopes/", "scripts_pe_heatmap": "scripts/pe_heatmap/"}
    assert lighthouse.pages_to_measure(urls, False) == list(urls)
    # --no-scripts: the scripts' pages share one template, so one of them stands for all
    assert lighthouse.pages_to_measure(urls, True) == ["home", "labs_lab1_mha", "rope", "scripts_alibi_slopes"]


def test_text_is_served_gzipped_with_its_length_and_images_as_they_are(tmp_path):
    page = "<html><body>" + "attention " * 500 + "</body></html>"
    (tmp_path / "index.html").write_text(page)
    (tmp_path / "a.png").write_bytes(b"\x89PNG" + bytes(200))
    server, base = lighthouse.serve(tmp_path)
    try:
        req = urllib.request.Request(base, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(req) as res:
            body = res.read()
            assert res.headers["Content-Encoding"] == "gzip" and int(res.headers["Content-Length"]) == len(body)
        assert gzip.decompress(body).decode() == page and len(body) < len(page) / 10
        with urllib.request.urlopen(base) as res:  # a client that does not accept gzip gets plain text
            assert res.headers.get("Content-Encoding") is None and res.read().decode() == page
        req = urllib.request.Request(base + "a.png", headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(req) as res:
            assert res.headers.get("Content-Encoding") is None and res.read()[:4] == b"\x89PNG"
    finally:
        server.shutdown()


def test_a_cpu_slowdown_outside_1_to_20_is_refused(capsys):
    for bad in ("0.5", "25"):
        try:
            lighthouse.main(["--cpu-slowdown", bad])
        except SystemExit as exc:
            assert exc.code == 2
        else:
            raise AssertionError(f"--cpu-slowdown {bad} was accepted")
        assert f"--cpu-slowdown must be between 1 and 20, got {bad}" in capsys.readouterr().err


def test_the_benchmark_note_gives_the_median_and_warns_below_lighthouses_threshold():
    slow = lighthouse.benchmark_note([700.4, 950.0, 820.0, 600.0])
    # four runs: the lower middle one, as for the scores; Lighthouse warns of a host under 1000
    assert "median 700, 600-950 over 4 runs" in slow and "under 1000" in slow
    fast = lighthouse.benchmark_note([1650.0, 1500.0, 1700.0])
    assert "median 1650, 1500-1700 over 3 runs." in fast and "under 1000" not in fast


def _audits(fcp, load):
    return {"metrics": {"details": {"items": [{"observedFirstContentfulPaint": fcp, "observedLoad": load}]}}}


def test_a_run_whose_first_paint_came_after_the_load_is_stalled():
    # numbers of two runs of one page here: painted at 0.21 s, loaded at 0.50 s (a normal run);
    # loaded at 0.51 s, painted at 1.27 s with nothing running in between (a stalled one)
    assert not lighthouse.paint_stalled(_audits(207, 504))
    assert lighthouse.paint_stalled(_audits(1266, 512))
    assert not lighthouse.paint_stalled({})  # a report without the metrics says nothing


def test_stalled_runs_are_counted_and_the_median_without_them_is_reported_beside():
    runs = [_run(65, stalled=True), _run(94), _run(60, stalled=True)]
    best = lighthouse.median_run(runs)
    # the ordinary median stays what is reported first; the other is beside it, never instead
    assert best["performance"] == 65 and best["perf_unstalled"] == 94 and best["stalled_runs"] == 2
    clean = lighthouse.median_run([_run(91), _run(97), _run(88)])
    assert clean["perf_unstalled"] == 91 and clean["stalled_runs"] == 0
    allbad = lighthouse.median_run([_run(61, stalled=True), _run(66, stalled=True)])
    assert allbad["perf_unstalled"] is None and allbad["stalled_runs"] == 2
