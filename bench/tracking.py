"""Traces per second into MLflow, and the MLflow UI's load time for a run with many traces.

    python bench/tracking.py [--traces 1000 10000] [--server] [--ui] [--out-dir DIR]

Synthetic OrderProbe-shaped rows (stages/track_traces.py's ItemRow: chat prompt, a 512-token-like
output of ~700 characters, 11 item-level metrics, 20 tags) written by the same code `track`
runs (traces.sync_traces), for each N in --traces into a fresh run:
- into the local SQLite store (sqlite:///<dir>/mlflow.db, what `make run` uses), and with
  --server into an `mlflow server` (the same SQLite file behind it, one worker, as in the
  shared-server set-up of docs/scaling-out.md); first write, then a re-track of the same rows (nothing to write);
- with --ui, `mlflow ui` on that store and headless Chromium (Debian's chromium): seconds from
  opening the run's traces tab (the link `track` prints) until its first rows are on the page,
  and the same for the experiment's Traces view; cold (a fresh browser profile each time).
Every figure is printed with the load average (`uptime`) at the time: on a shared machine the
load changes what a figure means.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "tests"), str(ROOT / "tests" / "support")]

from idiombench.core.progress import Progress  # noqa: E402
from idiombench.stages import track_traces as traces  # noqa: E402

LANGUAGES = ("zh-CN", "zh-TW", "ja", "ko")
PATTERNS = ("ABCD", "ABDC", "ACBD", "BADC", "CDAB", "DCBA")
OUTPUT = "这个成语的意思是比喻做事情要有始有终，不能半途而废。" * 28  # ~700 characters, a 512-token-like output


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def synthetic_rows(n: int, model: str) -> list[traces.ItemRow]:
    rows = []
    for i in range(n):
        language, pattern = LANGUAGES[i % 4], PATTERNS[(i // 4) % 6]
        item_id = f"{language}/{i // 24:04d}/{pattern}"
        metrics = [
            (name, round((i % 97) / 97 + k / 100, 6), {"id": "idiombench score orderprobe"})
            for k, name in enumerate(("s_acc", "ce", "sts", "lex", "f_beta", "s_info", "bert", "s_logic"))
        ]
        metrics += [
            ("recovered", i % 3 == 0, {"id": "idiombench score orderprobe"}),
            ("recovered_strict", i % 5 == 0, {"id": "idiombench score orderprobe"}),
            ("f_beta_halved", False, {"id": "idiombench score orderprobe"}),
        ]
        tags = {
            "benchmark": "orderprobe",
            "model": model,
            "setting": "zero_shot",
            "task": "restore",
            "language": language,
            "pass": "main",
            "sample": "0",
            "status": "ok",
            "item_id": item_id,
            "prompt_id": f"orderprobe/restore/zero_shot/{item_id}",
            "pattern": pattern,
            "category": "Verb-Object",
            "expression": "一鸣惊人",
            "expression_id": f"{language}/{i // 24:04d}",
            "is_canonical": "false",
            "is_identity": "false",
        }
        messages = [
            {"role": "system", "content": "你是一个语言专家。"},
            {"role": "user", "content": f"请解释以下文本的含义：鸣一惊人 #{i}"},
        ]
        rows.append(
            traces.ItemRow(
                key=f"orderprobe/{model}/zero_shot/orderprobe/restore/zero_shot/{item_id}/main/0",
                item_id=item_id,
                output_sha=f"{i:064x}",
                inputs={
                    "item_id": item_id,
                    "task": "restore",
                    "pass": "main",
                    "sample_index": 0,
                    "input": "鸣一惊人",
                    "messages": messages,
                },
                outputs={"text": OUTPUT, "answer": OUTPUT, "parse_ok": True, "finish_reason": "length"},
                expectations={"expected_answer": "一鸣惊人", "references": ["比喻平时没有表现，一下子做出惊人的成绩"]},
                metrics=metrics,
                tags=tags,
                request_preview=f"[{item_id}] 鸣一惊人",
                response_preview=OUTPUT,
                tokens=(48, 512),
            )
        )
    return rows


def write(uri: str, n: int, model: str) -> tuple[str, str, dict[str, float]]:
    """A fresh run with n traces; (experiment id, run id, rates)."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("bench") or None
    experiment_id = experiment.experiment_id if experiment else client.create_experiment("bench")
    run_id = client.create_run(experiment_id, run_name=f"{model} / zero_shot").info.run_id
    rows = synthetic_rows(n, model)
    scope = f"orderprobe/{model}/zero_shot"
    figures = {}
    for what in ("write", "re-track"):
        started = time.perf_counter()
        with Progress(n, f"{what} {n:,} traces", unit="trace") as progress:
            counts = traces.sync_traces(client, experiment_id, run_id, scope, rows, progress)
        seconds = time.perf_counter() - started
        figures[what] = n / seconds
        print(
            f"  {what}: {n:,} traces in {seconds:.1f} s = {n / seconds:,.1f} traces/s "
            f"(written {counts.written:,}, unchanged {counts.unchanged:,}); load {load()}",
            flush=True,
        )
    client.set_terminated(run_id)
    return experiment_id, run_id, figures


def ui_seconds(
    store_uri: str, cwd: Path, experiment_id: str, run_id: str, first_item: str, shots: Path
) -> dict[str, float]:
    from browser import Browser
    from helpers import mlflow_server

    out = {}
    with mlflow_server(store_uri, cwd, command="ui") as base:
        for name, url in (
            ("run traces tab", f"{base}/#/experiments/{experiment_id}/runs/{run_id}/evaluations"),
            ("experiment Traces view", f"{base}/#/experiments/{experiment_id}/traces"),
        ):
            with Browser() as browser:
                started = time.monotonic()
                browser.open(url)
                browser.wait_for_text(first_item, timeout=600)
                out[name] = time.monotonic() - started
                browser.screenshot(shots / f"{name.replace(' ', '-')}-{run_id[:8]}.png")
            print(f"  UI {name}: first rows after {out[name]:.1f} s; load {load()}", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--traces", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--server", action="store_true", help="also through an `mlflow server`")
    parser.add_argument("--ui", action="store_true", help="also the UI's load time (needs chromium)")
    parser.add_argument("--out-dir", type=Path, default=None, help="keep the stores and screenshots here")
    args = parser.parse_args()
    work = args.out_dir or Path(tempfile.mkdtemp(prefix="idiombench-bench-tracking-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"bench/tracking.py: {os.cpu_count()} CPUs; load {load()}; stores in {work}", flush=True)
    for n in args.traces:
        store = work / f"sqlite-{n}.db"
        store.unlink(missing_ok=True)
        uri = f"sqlite:///{store}"
        print(f"{n:,} traces into {uri}", flush=True)
        experiment_id, run_id, _ = write(uri, n, "sqlite")
        if args.server:
            from helpers import mlflow_server

            served = work / f"server-{n}.db"
            served.unlink(missing_ok=True)
            with mlflow_server(f"sqlite:///{served}", work, "--artifacts-destination", str(work / "artifacts")) as base:
                print(f"{n:,} traces into an mlflow server ({base}, sqlite:///{served})", flush=True)
                write(base, n, "server")
        if args.ui and shutil.which("chromium"):
            ui_seconds(uri, work, experiment_id, run_id, synthetic_rows(1, "sqlite")[0].item_id, work)
    if args.out_dir is None:
        shutil.rmtree(work, ignore_errors=True)
    subprocess.run(["uptime"], check=False)


if __name__ == "__main__":
    main()
