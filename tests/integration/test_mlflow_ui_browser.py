"""`mlflow ui` as a researcher sees it (issue 10, item 4): the tracked runs are rendered in
headless Chromium at the link `idiombench track` prints (mlflow_runs.ui_url), which opens
the experiment on its runs table: the parent runs by model name, their headline metrics.

MLflow 3.17's UI picks an experiment's page from its global workflow switch (GenAI /
Model training: the URL's `workflowType`, else the browser's last choice, GenAI by
default), not from the `mlflow.experimentKind` tag; the link names the switch.

Needs Debian's `chromium` (`make browser` installs it; `make test` does where it can install);
skipped without it. The screenshots are kept under the test's tmp dir (runs.png, charts.png)
for a person to look at; the chart one is checked: one bar per run and metric, in the run's
colour, of the length its value gives."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pytest
import yaml

from helpers import mlflow_server
from idiombench.core.io import write_json, write_parquet
from idiombench.pipeline.config import parse_params

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="Chromium is not on PATH: `make browser` installs Debian's chromium (needs root or sudo)",
    ),
]


def tracked_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Two reference models tracked on OrderProbe into tmp_path/mlflow.db; returns the store URI."""
    from idiombench.stages.track import track

    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    raw["models"] = {"oracle": {"backend": "oracle"}, "echo": {"backend": "echo"}}
    raw["tracking"] = {"traces": {"enabled": False}}  # runs only: the hand-written scores have no generations
    params = parse_params(raw)
    monkeypatch.chdir(tmp_path)
    for model, value in (("oracle", 100.0), ("echo", 12.5)):
        write_json(
            tmp_path / "results" / "metrics" / "orderprobe" / f"{model}.json",
            {
                "benchmark": "orderprobe",
                "model": model,
                "status": "scored",
                "settings": {
                    s: {"metrics": {"recovery": value}, "counts": {"items": 24}} for s in ("zero_shot", "cot")
                },
                "model_info": {
                    "name": model,
                    "display_name": model,
                    "config": {"backend": model},
                    "identity": {"backend": model},
                },
            },
        )
        for setting in ("zero_shot", "cot"):
            write_parquet(
                tmp_path / "results" / "scores" / model / "orderprobe" / f"{setting}.parquet",
                pa.table({"prompt_id": ["a"], "recovered": [value]}),
            )
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    for model in ("oracle", "echo"):
        track(params, benchmark="orderprobe", model=model)
    return uri


def chromium(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'chromium-profile'}",
            "--window-size=1600,1000",
            "--virtual-time-budget=30000",
            *args,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_mlflow_ui_opens_the_experiment_on_its_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from mlflow.tracking import MlflowClient

    uri = tracked_project(tmp_path, monkeypatch)
    experiment = MlflowClient(uri).get_experiment_by_name("orderprobe")
    with mlflow_server(uri, tmp_path, command="ui") as base:
        from idiombench.stages.track import ui_url

        url = ui_url(experiment.experiment_id, base)
        screenshot = tmp_path / "runs.png"
        shot = chromium(tmp_path, url, f"--screenshot={screenshot}")
        assert screenshot.is_file() and screenshot.stat().st_size > 10_000, shot.stderr[-2000:]
        dom = chromium(tmp_path, url, "--dump-dom").stdout
        (tmp_path / "runs.html").write_text(dom, encoding="utf-8")
        where = f"see {tmp_path / 'runs.html'} and {screenshot}"
        assert "Run Name" in dom, f"no runs table rendered; {where}"
        for run_name in ("oracle", "echo"):
            assert f">{run_name}<" in dom, f"run {run_name!r} not rendered; {where}"
        assert "No data available for the selected time range" not in dom, f"the GenAI overview, not the runs; {where}"
        # the Source column (mlflow.source.name) of the two parent runs
        assert dom.count(">idiombench track orderprobe<") == 2, f"no Source column for the two parent runs; {where}"
        # The chart view compares the parent runs' headline metrics (oracle 100, echo 12.5); the
        # table shows no metric columns until they are picked in "Columns".
        charts = tmp_path / "charts.png"
        chromium(tmp_path, url + "&compareRunsMode=CHART", f"--screenshot={charts}")
        chart_dom = chromium(tmp_path, url + "&compareRunsMode=CHART", "--dump-dom").stdout
        (tmp_path / "charts.html").write_text(chart_dom, encoding="utf-8")
        for text in ("cot/recovery", "zero_shot/recovery", "12.50", "100.00"):
            assert text in chart_dom, f"{text!r} not in the chart view; see {tmp_path / 'charts.html'} and {charts}"
        # What the screenshot shows: per headline metric (cot, zero_shot) one bar per run in the
        # run's colour, oracle's (100) eight times as long as echo's (12.5).
        colours = run_colours(chart_dom)
        assert set(colours) == {"oracle", "echo"}, f"run colours not found in {tmp_path / 'charts.html'}"
        for oracle, echo in run_bars(charts, colours):
            assert abs(oracle / echo - 100 / 12.5) <= 1, f"bar lengths {oracle} and {echo} px are not 100 : 12.5"


def run_bars(png: Path, colours: dict[str, tuple[int, int, int]]) -> list[tuple[int, int]]:
    """(oracle's, echo's) bar width in each of the two charts. MLflow picks a run's colour from
    its (random) run id, so now and then both runs get the same colour: their four bars are then
    told apart by length (the two longer ones are oracle's, if the lengths follow the values at
    all, which the caller checks)."""
    if colours["oracle"] != colours["echo"]:
        widths = {run: bar_widths(png, colour) for run, colour in colours.items()}
        assert len(widths["oracle"]) == len(widths["echo"]) == 2, f"expected 2 charts x 2 bars in {png}: {widths}"
        return list(zip(widths["oracle"], widths["echo"], strict=True))
    shared = sorted(bar_widths(png, colours["oracle"]))
    assert len(shared) == 4, f"expected 2 charts x 2 bars of the runs' shared colour in {png}: {shared}"
    return list(zip(shared[2:], shared[:2], strict=True))


def run_colours(dom: str) -> dict[str, tuple[int, int, int]]:
    """Each run's colour, from the swatch beside its name in the runs list of the chart view."""
    colours: dict[str, tuple[int, int, int]] = {}
    for match in re.finditer(r"background-color: rgb\((\d+), (\d+), (\d+)\).{0,600}?>(oracle|echo)<", dom, re.S):
        colours.setdefault(match.group(4), (int(match.group(1)), int(match.group(2)), int(match.group(3))))
    return colours


def bar_widths(png: Path, colour: tuple[int, int, int], min_height: int = 30) -> list[int]:
    """Widths in pixels of the bars drawn in `colour`, top to bottom: regions of that colour at
    least min_height pixels tall (the legend's line and the name's swatch are shorter)."""
    import numpy as np
    from PIL import Image

    image = np.asarray(Image.open(png).convert("RGB")).astype(int)
    mask = np.abs(image - np.array(colour)).max(axis=2) <= 8
    up, down = np.zeros(mask.shape, int), np.zeros(mask.shape, int)  # run length above / below each pixel
    for y in range(mask.shape[0]):
        up[y] = (up[y - 1] + 1) * mask[y] if y else mask[y]
    for y in range(mask.shape[0] - 1, -1, -1):
        down[y] = (down[y + 1] + 1) * mask[y] if y < mask.shape[0] - 1 else mask[y]
    tall = mask & (up + down - 1 >= min_height)
    rows = np.flatnonzero(tall.any(axis=1))
    if not rows.size:
        return []
    # a bar: consecutive rows; its width from its leftmost to its rightmost pixel (the value
    # printed inside a short bar breaks its columns, not its extent)
    blocks = np.split(rows, np.flatnonzero(np.diff(rows) > 1) + 1)
    return [int(np.ptp(np.flatnonzero(tall[block].any(axis=0)))) + 1 for block in blocks]


def test_items_in_the_mlflow_ui(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The items of the oracle and echo runs (issue 24): a setting's run lists its items (id,
    output, metrics), one item shows its prompt, output and assessments, the Traces view filters
    by a tag (and by track-comparison's, to the items the two models disagree on), and "compare
    to" puts the two models' outputs for the same item side by side. Screenshots: items.png,
    item.png, filtered.png, disagreeing.png, compared.png in tmp_path (paths printed)."""
    from mlflow.tracking import MlflowClient

    import traced_project
    from browser import Browser
    from idiombench.core.io import read_parquet
    from idiombench.stages.track import track
    from idiombench.stages.track_comparison import track_comparison

    traced_project.write_inputs(tmp_path)
    params = traced_project.run_stages(tmp_path, monkeypatch)
    uri = traced_project.empty_store(tmp_path)
    traced_project.use_store(monkeypatch, uri)
    runs = {
        model: track(params, benchmark="orderprobe", model=model)["runs"][f"orderprobe/{model}/zero_shot"]
        for model in ("oracle", "echo")
    }
    track_comparison(params, benchmark="orderprobe")
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("orderprobe").experiment_id
    scores = read_parquet(tmp_path / "results/scores/oracle/orderprobe/zero_shot.parquet").to_pandas()
    row = scores[(scores["pass"] == "main") & (scores["language"] == "ja")].iloc[0]
    (trace,) = client.search_traces(
        locations=[experiment],
        filter_string=(
            "tags.model = 'oracle' AND tags.setting = 'zero_shot' AND tags.pass = 'main' "
            f"AND tags.item_id = '{row['item_id']}'"
        ),
    )
    output = trace.data.spans[0].outputs["text"]
    shots = []

    def shot(browser: Browser, name: str) -> Path:
        browser.tidy()
        path = browser.screenshot(tmp_path / name)
        shots.append(path)
        print(f"screenshot: {path}")
        return path

    with mlflow_server(uri, tmp_path, command="ui") as base, Browser(1800, 1100) as browser:
        # the link `track` prints: the run's items, newest (the table's first rows) first
        browser.open(runs["oracle"]["items_ui"].replace("http://127.0.0.1:5000", base))
        # the first assessment columns (alphabetical: ce, f_beta, ...), values to 3 decimals
        browser.wait_for_text(
            f"[{row['item_id']}]", output, "expected_answer", "f_beta", f"{round(row['f_beta'], 3):g}"
        )
        shot(browser, "items.png")

        browser.open(f"{base}/#/experiments/{experiment}/traces?traceId={trace.info.trace_id}")
        browser.wait_for_text("Inputs", row["item_id"], output)
        browser.evaluate(
            "[...document.querySelectorAll('button')].find("
            "b => (b.getAttribute('aria-label') || '').startsWith('Assess trace')).click()"
        )
        browser.wait_for_text("Feedback", "s_acc", repr(float(row["s_acc"])), "recovered")
        shot(browser, "item.png")

        def filter_by_tag(key: str, value: str, kept: str, gone: str, screenshot: str) -> None:
            """The Traces view filtered by a tag: `kept` stays listed, `gone` goes."""
            browser.open(f"{base}/#/experiments/{experiment}/traces")
            browser.wait_for_text("Traces")
            # the UI keeps the last filter in the browser's storage: start without one (a reload:
            # opening the same page again only changes the URL's hash, and the app keeps its state)
            browser.evaluate("localStorage.clear(); sessionStorage.clear()")
            browser.call("Page.reload", ignoreCache=True)
            browser.wait_for_text(kept, gone)
            browser.tidy()  # a first-visit hint over the toolbar
            browser.evaluate(
                "[...document.querySelectorAll('button')].find(b => b.getAttribute('aria-label') == 'Filters').click()"
            )
            browser.wait_for_text("Field", "Apply filters")
            browser.evaluate(
                "[...document.querySelectorAll('[role=combobox], button, input')].filter("
                "e => e.offsetParent && (e.innerText || e.value || '').trim() == 'State').forEach(e => e.click())"
            )
            browser.wait_for_text("Tag")
            assert browser.click_text("Tag", "[role=option], li")
            for label, text in (("Filter key", key), ("Filter value", value)):
                browser.wait_for_text("Apply filters")
                browser.evaluate(f"document.querySelector('input[aria-label=\"{label}\"]').focus()")
                browser.call("Input.insertText", text=text)
            assert browser.click_text("Apply filters")
            browser.wait_for_text(kept)
            deadline = time.monotonic() + 60
            while gone in browser.text() and time.monotonic() < deadline:
                time.sleep(0.5)
            assert gone not in browser.text(), f"the tag filter left {gone}; see {shot(browser, screenshot)}"
            shot(browser, screenshot)
            print(f"filtered by {key} at {browser.evaluate('location.href')}")

        filter_by_tag("language", "ja", "ja/0002/", "zh-CN/0001/", "filtered.png")
        # the items two models disagree on (track-comparison's tag): echo restores only the
        # unscrambled ABCD inputs, which the oracle restores too
        filter_by_tag("disagreement", "true", "zh-CN/0001/ABDC", "zh-CN/0001/ABCD", "disagreeing.png")

        # side by side: the oracle's run compared to the echo's, item by item
        echo_output = row["input"]  # echo copies the scrambled input
        browser.open(
            runs["oracle"]["items_ui"].replace("http://127.0.0.1:5000", base)
            + f"?compareToRunUuid={runs['echo']['run_id']}"
        )
        browser.wait_for_text("compare to", "echo / zero_shot", f"[{row['item_id']}]", output, echo_output)
        shot(browser, "compared.png")
    assert all(path.stat().st_size > 20_000 for path in shots)
