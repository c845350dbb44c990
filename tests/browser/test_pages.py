"""The HTML pages in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``) driven through selenium.

Pages: ``jalapeno report``, the ``compare`` chart and the ``simulate`` page, each built once by
the CLI on small sweeps. Checked: the page loads with no console error and draws its traces; the
report's selectors change what is plotted (metric, power convention, x axis); every legend entry
has its system's colour (report/colors.py), the same on every panel; the export buttons' image
renderer yields PNG and SVG; a system named with HTML is shown as text, never run.

Skipped (with the reason) when selenium, chromium or chromedriver is missing; ``.ci/run``
installs them, so CI runs these.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pytest

from jalapeno.report.colors import system_color

selenium = pytest.importorskip("selenium", reason="selenium not installed (pip install -e '.[test]')")
from selenium import webdriver  # noqa: E402 (after importorskip)
from selenium.webdriver.chrome.service import Service  # noqa: E402 (after importorskip)
from selenium.webdriver.common.by import By  # noqa: E402 (after importorskip)
from selenium.webdriver.support.ui import Select  # noqa: E402 (after importorskip)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER),
                                reason="headless Chromium not installed (apt-get install chromium chromium-driver)")

XSS_NAME = 'b200 <img src=x onerror="window.__xss=1"> & co'


@pytest.fixture(scope="module")
def browser():
    profile = tempfile.mkdtemp(prefix="jalapeno-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1280,900"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(options=opts, service=Service(DRIVER))
    drv.set_script_timeout(30)
    yield drv
    drv.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The three pages, written by the CLI (small sweeps: aggregated serving, two systems)."""
    d = tmp_path_factory.mktemp("pages")
    (d / "xss.toml").write_text(f"base = \"b200\"\nname = '{XSS_NAME}'\n")  # TOML literal string
    out = {"report": d / "report.html", "compare": d / "compare.html", "sim": d / "sim.html",
           "xss": d / "xss.html"}
    for args in (["report", "-w", "1k1k", "--systems", "jalapeno,b200", "--serving", "agg", "-o", str(out["report"])],
                 ["compare", "-w", "1k1k", "--systems", "jalapeno,gb200-nvl72,b200", "--serving", "agg",
                  "--html", str(out["compare"])],
                 ["simulate", "-s", "gb200-nvl72", "--tp", "1", "--dp", "8", "--ep", "8", "-c", "16", "-n", "48",
                  "--isl", "1024", "--osl", "128", "--html", str(out["sim"])],
                 ["report", "-w", "1k1k", "--systems", f"jalapeno,{d / 'xss.toml'}", "--serving", "agg",
                  "--measured", "none", "-o", str(out["xss"])]):
        code = _cli(*args)
        assert code == 0, args
    return out


def _cli(*args: str) -> int:
    from jalapeno.cli.app import main

    try:
        main(list(args))
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 0
    return 0


def _open(browser, path: Path) -> list[dict]:
    """Load ``path``; return its console errors (SEVERE entries)."""
    browser.get_log("browser")  # drop earlier entries
    browser.get(path.as_uri())
    browser.execute_async_script("""const done = arguments[arguments.length - 1];
        const t0 = Date.now(); (function wait() {
          const gd = document.querySelector('.js-plotly-plot');
          if ((gd && gd._fullLayout) || Date.now() - t0 > 20000) done(); else setTimeout(wait, 50); })();""")
    return [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def _hex(css: str) -> str:
    """'rgb(213, 94, 0)' → '#d55e00'."""
    r, g, b = (int(v) for v in re.findall(r"\d+", css)[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def _legend_colors(browser) -> dict[str, str]:
    """Legend entry text → the stroke colour of its line sample."""
    return browser.execute_script("""const out = {};
        for (const t of document.querySelectorAll('.legend .traces')) {
          const name = t.querySelector('.legendtext').textContent;
          const line = t.querySelector('.js-line') || t.querySelector('.scatterpts');
          out[name] = line ? (line.style.stroke || line.style.fill) : null; }
        return out;""")


def _trace_colors(browser) -> list[tuple[str, str, str]]:
    """(legendgroup, name, line colour) of every drawn non-band trace."""
    return browser.execute_script("""const gd = document.querySelector('.js-plotly-plot');
        return gd._fullData.filter(t => !t.name.endsWith(' band'))
                 .map(t => [t.legendgroup || t.name, t.name, (t.line && t.line.color) || t.marker.color]);""")


def test_report_loads_and_colours_match_the_legend(browser, pages):
    assert _open(browser, pages["report"]) == []
    legend = _legend_colors(browser)
    for system in ("jalapeno", "b200"):
        assert _hex(legend[system]) == system_color(system).lower()
    for group, name, color in _trace_colors(browser):
        assert color.lower() == system_color(group).lower(), (group, name, color)
    # measured points of B200 at 1K/1K are shipped: drawn in B200's colour, one legend entry per
    # configuration; the disaggregated and MTP runs are marked against this aggregated, MTP-free frontier
    measured = [k for k in legend if k.startswith("b200 measured · ")]
    assert measured and any(k.endswith("(not like for like)") for k in measured), measured
    assert "b200 measured · fp8 · agg · no MTP" in measured
    symbols = browser.execute_script("""return document.querySelector('.js-plotly-plot')._fullData
        .filter(t => t.name.includes(' measured · ')).map(t => [t.name, t.marker.symbol]);""")
    assert symbols and all(sym == ("diamond-open" if name.endswith("(not like for like)") else "circle-open")
                           for name, sym in symbols), symbols


def test_report_selectors_change_the_plot(browser, pages):
    assert _open(browser, pages["report"]) == []
    state = "return [document.querySelector('.js-plotly-plot').data[0].x.slice(0, 3), " \
            "document.querySelector('.js-plotly-plot').data[0].y.slice(0, 3), " \
            "document.querySelector('.js-plotly-plot')._fullLayout.yaxis.title.text, " \
            "document.querySelector('.js-plotly-plot')._fullLayout.xaxis.title.text];"
    x0, y0, ytitle0, xtitle0 = browser.execute_script(state)
    assert "per chip" in ytitle0 and "interactivity" in xtitle0
    Select(browser.find_element(By.ID, "metric")).select_by_value("kw")
    x1, y1, ytitle1, _ = browser.execute_script(state)
    assert "per kW" in ytitle1 and "all-in" in ytitle1 and y1 != y0 and x1 == x0
    Select(browser.find_element(By.ID, "convention")).select_by_value("chip")
    _, y2, ytitle2, _ = browser.execute_script(state)
    assert "chip power" in ytitle2 and y2 != y1
    # chip TDP < all-in power per chip: more tok/s per kW
    assert all(b > a for a, b in zip(y1, y2))
    Select(browser.find_element(By.ID, "xaxis")).select_by_value("e2e")
    x3, _, _, xtitle3 = browser.execute_script(state)
    assert "E2E" in xtitle3 and x3 != x0


def test_report_exports_png_and_svg(browser, pages):
    assert _open(browser, pages["report"]) == []
    for fmt, prefix in (("png", "data:image/png"), ("svg", "data:image/svg+xml")):
        url = browser.execute_async_script("""const done = arguments[arguments.length - 1];
            Plotly.toImage(document.querySelector('.js-plotly-plot'), {format: arguments[0], width: 800, height: 400})
              .then(done, e => done('error: ' + e));""", fmt)
        assert url.startswith(prefix), url[:80]
    assert browser.find_element(By.ID, "export-png").is_displayed()
    assert browser.find_element(By.ID, "export-svg").is_displayed()


def test_user_strings_are_escaped(browser, pages):
    assert _open(browser, pages["xss"]) == []
    assert browser.execute_script("return window.__xss === undefined")
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    cells = [c.text for c in browser.find_elements(By.CSS_SELECTOR, "table.headline td:first-child")]
    assert XSS_NAME in cells
    assert XSS_NAME in _legend_colors(browser)


def test_compare_chart_one_colour_per_system_on_every_panel(browser, pages):
    assert _open(browser, pages["compare"]) == []
    traces = _trace_colors(browser)
    assert len(traces) == 9  # three systems × three panels
    for group, name, color in traces:
        assert color.lower() == system_color(group).lower(), (group, color)
    legend = _legend_colors(browser)
    assert {_hex(c) for c in legend.values()} == {system_color(s).lower()
                                                  for s in ("jalapeno", "gb200-nvl72", "b200")}
    # the figure follows the window: no fixed pixel width
    assert browser.execute_script("return document.querySelector('.js-plotly-plot')._fullLayout.autosize")


def test_sim_page_axes_are_titled(browser, pages):
    assert _open(browser, pages["sim"]) == []
    layout = browser.execute_script("""const L = document.querySelector('.js-plotly-plot')._fullLayout;
        const out = {}; for (const k of Object.keys(L)) if (/^[xy]axis\\d*$/.test(k))
          out[k] = [L[k].title.text, L[k].range]; return out;""")
    assert all(title for title, _ in layout.values()), layout
    kv = [rng for title, rng in layout.values() if title.startswith("KV cache")]
    assert kv == [[0, 100]]
