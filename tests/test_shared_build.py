"""The test run's own machinery (tests/conftest.py): one shared site build, started once,
failing once with its log, ended when it hangs; tests grouped so fixtures are made once."""
from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

import conftest


def test_a_failed_build_fails_every_caller_with_its_log_and_is_not_run_again(tmp_path):
    base = tmp_path / "built-site"
    base.mkdir()
    (base / "pid").write_text("999999999")  # "started" already: nothing may start another build
    (base / "log.txt").write_text("INFO - building\nERROR - figure 'pe_heatmap' failed: boom\n")
    (base / "rc").write_text("1\n")
    for _ in range(2):
        with pytest.raises(pytest.fail.Exception, match=r"(?s)failed once \(exit 1\).*figure 'pe_heatmap' failed: boom"):
            conftest.wait_for_build(base, timeout=5)
    assert sorted(p.name for p in base.iterdir()) == ["log.txt", "pid", "rc"]


def test_a_build_that_hangs_is_ended_after_the_timeout_with_its_group(tmp_path):
    base = tmp_path / "built-site"
    base.mkdir()
    hung = subprocess.Popen(["sh", "-c", "sleep 300 & sleep 300"], start_new_session=True)
    (base / "pid").write_text(str(hung.pid))
    t0 = time.monotonic()
    with pytest.raises(pytest.fail.Exception, match=r"failed once \(timeout after 0.5 s"):
        conftest.wait_for_build(base, timeout=0.5)
    assert time.monotonic() - t0 < 10
    assert hung.wait(timeout=10) == -signal.SIGKILL
    deadline = time.monotonic() + 10
    while _alive_in_group(hung.pid) and time.monotonic() < deadline:  # the background sleep too
        time.sleep(0.05)
    assert not _alive_in_group(hung.pid)


def _alive_in_group(pgid: int) -> list[int]:
    """Processes of group ``pgid`` that still run (a zombie, killed but not yet reaped, does not)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


def test_a_good_build_is_read_as_it_is(tmp_path):
    base = tmp_path / "built-site"
    (base / "site").mkdir(parents=True)
    (base / "pid").write_text("999999999")
    (base / "rc").write_text("0\n")
    assert conftest.wait_for_build(base, timeout=5) == base / "site"


class _Item:
    """What the grouping hook reads of a collected test."""

    def __init__(self, nodeid, scopes, group=None, fixturenames=()):
        self.nodeid, self.marks, self.fixturenames = nodeid, [], list(fixturenames)
        defs = {f"f{i}": [type("Def", (), {"scope": scope})()] for i, scope in enumerate(scopes)}
        self._fixtureinfo = type("Info", (), {"name2fixturedefs": defs})()
        if group:
            self.marks.append(pytest.mark.xdist_group(group).mark)

    def iter_markers(self, name):
        return (m for m in self.marks if m.name == name)

    def add_marker(self, decorator):
        self.marks.append(decorator.mark)


def test_tests_sharing_a_module_fixture_run_on_one_worker():
    """An item using a module- or class-scoped fixture gets its module as its xdist group; one
    with only function and session fixtures is left to the load balancer; a group set by the
    test itself (the tour's configurations) is kept."""
    items = [_Item("tests/test_a.py::test_one", ["function", "module"]),
             _Item("tests/test_a.py::test_two[x]", ["session", "class"]),
             _Item("tests/test_a.py::test_free", ["function", "session"]),
             _Item("tests/test_b.py::test_tour[p]", ["module"], group="tour-desktop")]
    conftest.pytest_collection_modifyitems(None, items)
    groups = [[m.args[0] for m in i.iter_markers("xdist_group")] for i in items]
    assert groups == [["tests/test_a.py"], ["tests/test_a.py"], [], ["tour-desktop"]]


def test_the_workers_write_each_grouped_tests_group_for_the_scheduler(tmp_path):
    """pytest >= 9.2 ignores xdist's "@group" node-id suffix (pytest-dev/pytest-xdist#1386), so
    the groups reach the scheduler through a file: grouped tests only, several marks joined."""
    import json

    items = [_Item("tests/t.py::a", [], group="tour-desktop", fixturenames=["tour", "built_site"]),
             _Item("tests/t.py::b", []), _Item("tests/t.py::c", [], group="x")]
    items[2].add_marker(pytest.mark.xdist_group("w"))
    conftest._write_groups(tmp_path / "groups.json", items)
    assert json.loads((tmp_path / "groups.json").read_text()) == {
        "groups": {"tests/t.py::a": "tour-desktop", "tests/t.py::c": "w_x"}, "site": ["tests/t.py::a"]}


def test_scopes_that_need_no_site_go_out_first_and_the_largest_first_within_each_kind():
    """While the shared site builds the workers run what needs no site; a scope with one test
    that needs the site waits with the others that do; the largest scope of each kind goes
    first, so the last one handed out is small."""
    queue = {"a.py::x": {"a.py::x": False},
             "group:tour": {f"b.py::t[{i}]": False for i in range(5)},
             "group:c.py": {"c.py::one": False, "c.py::two": False, "c.py::site": False},
             "group:d.py": {"d.py::one": False, "d.py::two": False},
             "e.py::y": {"e.py::y": False}}
    site = {"b.py::t[0]", "b.py::t[1]", "b.py::t[2]", "b.py::t[3]", "b.py::t[4]", "c.py::site", "e.py::y"}
    order = list(conftest._site_last(queue, site))
    assert order == ["group:d.py", "a.py::x", "group:tour", "group:c.py", "e.py::y"]


def test_a_test_that_reads_the_site_is_marked_build():
    """``make check`` (``-m "not build and not slow"``) must never wait for the site: a test that
    reads it through ``built_site`` without the ``build`` mark is refused when tests are collected
    (two were, and made the fast tier build the whole site)."""
    from types import SimpleNamespace

    def item(nodeid, fixtures, marks=()):
        return SimpleNamespace(nodeid=nodeid, fixturenames=fixtures,
                               get_closest_marker=lambda name: name if name in marks else None)

    items = [item("reads", ["built_site", "tmp_path"]), item("marked", ["built_site"], ("build",)),
             item("slow only", ["built_site"], ("slow",)), item("no site", ["tmp_path"])]
    assert conftest.unmarked_site_tests(items) == ["reads", "slow only"]
