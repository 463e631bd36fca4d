"""The option-order pass (docs/METRICS.md#7-option-order-robustness) on the real releases, through
the stages' own code: render writes every rotation, generate runs them (rotation 0 shared with
the main pass), score / aggregate / estimands / the report tables follow.

Reference systems on G-IdiomAlign Task 1 (30 items), ChID with candidates and SemanticQA IED and
NCC (small seeded samples): the oracle is right under every rotation (CircularEval 100); the
majority system, which always picks the gold's most frequent released position, is the
fixed-position picker: CircularEval 0 and position bias 1.0. SmolLM2 (the embedded default's
model) runs the pass on 2 ChID items: every rotation answered, its rotation-0 answers the main
pass's own (one request each).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from idiombench.benchmarks.contexts import AggregateContext, ScoreContext
from idiombench.benchmarks.registry import get_benchmark
from idiombench.pipeline.config import parse_params
from idiombench.stages.generate import run_generate
from idiombench.stages.inputs import load_generations, load_items
from idiombench.stages.render import render_benchmark, write_render
from idiombench.stages.report import ReportContext
from idiombench.stages.report_uncertainty import annotate_section, spec_targets

pytestmark = [pytest.mark.mirror, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PASS = "option_order"
# benchmark -> (the settings rendered, its sample); the option-order pass runs on all of them
SETUP = {
    "g-idiomalign": (["mcq"], {"mcq_per_direction": 1, "generation_per_direction": 1, "seed": 0}),
    "chengyu-bench": (["chid_candidates"], {"items_per_task": 2, "seed": 0}),
    "semanticqa": (["0-shot"], {"items_per_task": 2, "seed": 0}),
}
MODELS = ("oracle", "majority", "smollm2")


def params_for(tmp: Path) -> Any:
    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    for name, section in raw["benchmarks"].items():
        section["enabled"] = name in SETUP
        if name in SETUP:
            settings, sample = SETUP[name]
            section["render"]["settings"] = settings
            section["render"]["sample"] = sample
            section["generate"]["extra"] = {PASS: {**section["generate"]["main"], "rotate_options": True}}
    smollm2 = {**raw["models"]["smollm2"], "benchmarks": ["chengyu-bench"]}
    raw["models"] = {"oracle": {"backend": "oracle"}, "majority": {"backend": "majority"}, "smollm2": smollm2}
    return parse_params(raw, str(tmp / "params.yaml"))


@pytest.fixture(scope="module")
def run(built, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("option_order")
    params = params_for(tmp)
    processed = {b: built(b) for b in SETUP}
    for benchmark, out in processed.items():
        config = params.benchmark(benchmark)
        raw_dir = out.parent.parent / "raw" / benchmark
        write_render(benchmark, config, render_benchmark(benchmark, config, out, raw_dir), tmp / "prompts" / benchmark)
    scores: dict[str, dict[str, Any]] = {b: {} for b in SETUP}
    bodies: dict[str, dict[str, Any]] = {b: {} for b in SETUP}
    logs: dict[str, Any] = {}
    for model in MODELS:
        result = run_generate(
            params,
            model,
            out_dir=tmp / "gen" / model,
            prompts_root=tmp / "prompts",
            items_root=next(iter(processed.values())).parent,
            cache_dir=tmp / "cache" / model,
            logs_dir=tmp / "logs",
            echo=lambda _line: None,
        )
        logs[model] = result.summary
        for benchmark in params.models[model].benchmarks or SETUP:
            config, bench, items = (
                params.benchmark(benchmark),
                get_benchmark(benchmark),
                load_items(benchmark, processed[benchmark]),
            )
            ctx = ScoreContext(
                params=params,
                model=model,
                benchmark=benchmark,
                config=config,
                generations=load_generations(benchmark=benchmark, model=model, generations_dir=tmp / "gen" / model),
                items=items,
            )
            scores[benchmark][model] = bench.score(ctx)
            bodies[benchmark][model] = bench.aggregate(
                AggregateContext(
                    params=params,
                    model=model,
                    benchmark=benchmark,
                    config=config,
                    scores=scores[benchmark][model],
                    items=items,
                    scoring_meta={"notes": ctx.notes},
                )
            )
    return {"params": params, "scores": scores, "bodies": bodies, "logs": logs, "tmp": tmp}


def order_metrics(body: dict[str, Any]) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(where, metrics, counts) of every option-order summary in a metrics body."""
    out = []
    for setting, entry in body["settings"].items():
        if "option_order" in entry["counts"]:
            out.append((setting, entry["metrics"], entry["counts"]["option_order"]))
        for task, counts in entry["counts"].items():  # SemanticQA: per task
            if isinstance(counts, dict) and "option_order" in counts:
                out.append((f"{setting}/{task}", entry["metrics"][task], counts["option_order"]))
    return out


# how each benchmark's prompt lists the options, in the order shown
SHOWN = {
    "g-idiomalign": lambda options: (
        "Options:\n" + "".join(f"{L}. {t}\n" for L, t in zip("ABCD", options, strict=False))
    ),
    "chengyu-bench": lambda options: "The candidate idioms are: " + ", ".join(options),
    "semanticqa": lambda options: "\t".join(f"{L}: {t}" for L, t in zip("ABCD", options, strict=False)),
}


def test_render_writes_every_rotation_of_the_choice_items_only(run, built) -> None:
    from idiombench.core.items import rotate
    from idiombench.templating.prompts import read_prompts

    for benchmark, expected_options in (("g-idiomalign", 4), ("chengyu-bench", 7), ("semanticqa", 4)):
        items = load_items(benchmark, built(benchmark))
        for path in sorted((run["tmp"] / "prompts" / benchmark).glob("*.parquet")):
            prompts = read_prompts(path)
            rotated = {(p.task, p.item_id) for p in prompts if p.rotation}
            assert rotated, path
            for task, item_id in rotated:
                rotations = sorted(p.rotation for p in prompts if (p.task, p.item_id) == (task, item_id))
                assert rotations == list(range(expected_options)), (task, item_id)
            for prompt in prompts:  # the prompt shows the options in its rotation's order, letters in place
                choices = items[prompt.task][prompt.item_id].choices
                if (prompt.task, prompt.item_id) in rotated:
                    assert SHOWN[benchmark](rotate(choices, prompt.rotation)) in prompt.messages[-1].content
            # SemanticQA: only IED and NCC have options to rotate
            assert {task for task, _ in rotated} <= {"mcq", "chid", "idiom_detection", "noun_compound_compositionality"}


def test_the_oracle_is_right_under_every_rotation(run) -> None:
    summaries = [s for b in SETUP for s in order_metrics(run["bodies"][b]["oracle"])]
    assert len(summaries) == 4  # mcq, chid_candidates, 0-shot IED and NCC
    for where, metrics, counts in summaries:
        assert metrics["option_order.circular_accuracy"] == 100.0, where
        assert metrics["option_order.rotation_accuracy"] == 100.0, where
        assert counts["items_missing_a_rotation"] == 0 and counts["rows"] == counts["items"] * counts["options"]
        # the gold sits at every shown position once per item: picks are spread evenly
        assert metrics["option_order.position_bias"] == pytest.approx(1 / counts["options"]), where


def test_a_fixed_position_picker_has_position_bias_one_and_no_circular_accuracy(run) -> None:
    summaries = [s for b in SETUP for s in order_metrics(run["bodies"][b]["majority"])]
    assert len(summaries) == 4
    for where, metrics, counts in summaries:
        assert metrics["option_order.position_bias"] == 1.0, where
        assert metrics["option_order.circular_accuracy"] <= 5.0, where  # an option listed twice could save one
        assert metrics["option_order.rotation_accuracy"] == pytest.approx(100 / counts["options"], abs=5.0), where
        assert list(counts["picks_by_position"].values()).count(0) == counts["options"] - 1


def test_smollm2_runs_the_pass_and_its_rotation_zero_is_the_main_pass(run) -> None:
    ((where, metrics, counts),) = order_metrics(run["bodies"]["chengyu-bench"]["smollm2"])
    assert where == "chid_candidates" and counts["items"] == 2 and counts["rows"] == 14
    assert counts["items_missing_a_rotation"] == 0
    assert all(
        metrics[f"option_order.{m}"] is not None
        for m in ("accuracy_as_released", "rotation_accuracy", "circular_accuracy")
    )
    table = run["scores"]["chengyu-bench"]["smollm2"]["chid_candidates"]
    main, rotation0 = table[table["pass"] == "main"], table[(table["pass"] == PASS) & (table["rotation"] == 0)]
    assert (
        main.set_index("item_id")["parsed"].map(list).to_dict()
        == rotation0.set_index("item_id")["parsed"].map(list).to_dict()
    )
    # its rotation 0 is the main pass's request (the same key: generated once); 2 x 6 more requests
    generations = load_generations(
        benchmark="chengyu-bench", model="smollm2", generations_dir=run["tmp"] / "gen" / "smollm2"
    )["chid_candidates"]
    keys = generations.groupby(["pass", "rotation"])["request_key"].apply(set)
    assert keys[("main", 0)] == keys[(PASS, 0)] and generations["request_key"].nunique() == 2 + 2 * 6


def test_report_tables_carry_intervals_over_items(run, tmp_path: Path) -> None:
    benchmark = "g-idiomalign"
    params, bodies = run["params"], run["bodies"][benchmark]
    # each as run_aggregate writes it around the aggregate hook's part
    metrics = {m: {"benchmark": benchmark, "model": m, "status": "scored", **b} for m, b in bodies.items()}
    ctx = ReportContext(params=params, benchmark=benchmark, metrics=metrics, figures_dir=tmp_path)
    section = get_benchmark(benchmark).report_section(ctx)
    table = next(t for t in section.tables if t.table_id.endswith("_option_order"))
    assert any(f.figure_id.endswith("_option_order") and f.path.is_file() for f in section.figures)
    estimands = spec_targets(benchmark, params.benchmark(benchmark), run["scores"][benchmark])
    target = estimands["oracle"]["mcq/option_order.circular_accuracy"]
    assert target.estimand is not None and target.estimand.unit == "item"
    annotate_section(section, estimands, params.report.uncertainty, ctx.display_name)
    cells = {row[0].text: [c.text for c in row] for row in table.rows}
    assert cells["oracle"][5].startswith("100.0 ±") and cells["majority"][7].startswith("1.00 ±")
    assert "resamples of the items" in table.footnotes[-1]
