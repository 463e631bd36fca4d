"""The generate stage on reference backends: passes, batching, resume, output, summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from gen_project import IDIOMS, PATTERNS, SETTINGS, write_project
from idiombench.core.errors import ConfigError, IdiombenchError
from idiombench.core.generation_types import ItemContext, Message, Request, Sampling
from idiombench.core.io import read_parquet
from idiombench.generation.cache import GenerationCache
from idiombench.generation.table import GENERATION_SCHEMA, read_generations
from idiombench.pipeline.config import load_params
from idiombench.stages.generate import make_batches, run_generate

ITEM = ItemContext("orderprobe", "restore", "zero_shot", "i", "x")
DEFAULT_SAMPLING = Sampling()


def request(key: str, text: str, sampling: Sampling = DEFAULT_SAMPLING) -> Request:
    return Request(
        key=key, prompt_id=key, messages=(Message("user", text),), sampling=sampling, seed=0, sample_index=0, item=ITEM
    )


def test_batches_depend_only_on_request_content():
    greedy, sampled = Sampling(), Sampling(temperature=0.7)
    requests = [request(f"{i:02d}" * 32, "x" * (i % 5), greedy if i % 3 else sampled) for i in range(20)]
    requests.append(requests[0])  # a duplicate key is generated once
    batches = make_batches(requests, 4)
    assert make_batches(list(reversed(requests)), 4) == batches
    assert sum(len(b) for b in batches) == 20
    for batch in batches:
        assert len(batch) <= 4 and len({r.sampling for r in batch}) == 1
    flat = [r for b in batches for r in b]
    assert len({r.key for r in flat}) == 20
    # a subset (e.g. what is left to do) does not change how the full list is cut
    assert make_batches(requests, 4) == batches


def run(project: Path, model: str, monkeypatch, **kwargs):
    monkeypatch.chdir(project)
    lines: list[str] = []
    result = run_generate(load_params(project / "params.yaml"), model, echo=lines.append, **kwargs)
    return result, lines


def test_oracle_generates_every_pass_and_a_rerun_is_all_cache_hits(tmp_path: Path, monkeypatch):
    project = write_project(tmp_path, {"oracle": {"backend": "oracle", "batch_size": 5}}, consistency_n=3)
    result, lines = run(project, "oracle", monkeypatch)
    out = project / "results" / "generations" / "oracle"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == [
        "generation_info.json",
        "identity.json",
        "idiombench-output.json",
        "orderprobe/cot.parquet",
        "orderprobe/zero_shot.parquet",
    ]
    identity = json.loads((out / "identity.json").read_text(encoding="utf-8"))
    assert identity["backend"] == "oracle" and identity["loaded"] == "oracle"
    items = len(IDIOMS) * len(PATTERNS)
    rows = read_generations(out / "orderprobe" / "cot.parquet")
    assert read_parquet(out / "orderprobe" / "cot.parquet").schema.equals(GENERATION_SCHEMA)
    assert len(rows) == items * (1 + 3)
    assert [(r["prompt_id"], r["pass"], r["sample_index"]) for r in rows] == sorted(
        (r["prompt_id"], r["pass"], r["sample_index"]) for r in rows
    )
    first = rows[0]
    assert first["prompt_id"] == "orderprobe/restore/cot/zh-CN/0000/ABCD"
    assert first["text"] == "Thinking Process: 画蛇添足 → 画蛇添足\nFinal Meaning: 比喻做了多余的事"
    zero = read_generations(out / "orderprobe" / "zero_shot.parquet")
    assert zero[0]["text"] == "画蛇添足：比喻做了多余的事"
    assert {r["pass"] for r in rows} == {"main", "consistency"}
    total = result.summary["total"]
    # oracle answers do not depend on the prompt text, but keys do: zero_shot and cot differ
    assert total["generated"] == 2 * items * 4 and total["cached"] == 0 and total["failed"] == 0
    assert lines[-1].startswith("generate oracle total: 48 items")
    summary_file = project / "results" / "logs" / "generate-oracle.json"
    assert json.loads(summary_file.read_text(encoding="utf-8"))["total"]["generated"] == 2 * items * 4

    before = {p: p.read_bytes() for p in out.rglob("*.parquet")}
    reads: list[set[str]] = []  # the texts are read one table at a time (a grid's are gigabytes)
    read = GenerationCache.read
    monkeypatch.setattr(GenerationCache, "read", lambda self, keys: reads.append(set(keys)) or read(self, keys))
    again, lines = run(project, "oracle", monkeypatch)
    assert reads == [
        {r["request_key"] for r in read_generations(out / "orderprobe" / f"{setting}.parquet")}
        for setting in ("cot", "zero_shot")
    ]
    assert again.summary["total"]["cached"] == 2 * items * 4 and again.summary["total"]["generated"] == 0
    assert again.summary["total"]["cache_hit_rate"] == 1.0
    assert "(100% cache hits" in lines[-1]
    assert {p: p.read_bytes() for p in out.rglob("*.parquet")} == before


def test_an_extra_pass_restricted_to_some_settings(tmp_path: Path, monkeypatch):
    project = write_project(
        tmp_path, {"oracle": {"backend": "oracle"}}, consistency_n=2, consistency_settings=["zero_shot"]
    )
    run(project, "oracle", monkeypatch)
    out = project / "results" / "generations" / "oracle" / "orderprobe"
    items = len(IDIOMS) * len(PATTERNS)
    zero = read_generations(out / "zero_shot.parquet")
    cot = read_generations(out / "cot.parquet")
    assert len(zero) == items * 3 and {r["pass"] for r in zero} == {"main", "consistency"}
    assert len(cot) == items and {r["pass"] for r in cot} == {"main"}


def test_the_main_pass_cannot_be_restricted(tmp_path: Path, monkeypatch):
    project = write_project(tmp_path, {"oracle": {"backend": "oracle"}})
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    params["benchmarks"]["orderprobe"]["generate"]["main"]["settings"] = ["cot"]
    (project / "params.yaml").write_text(yaml.safe_dump(params, allow_unicode=True), encoding="utf-8")
    with pytest.raises(IdiombenchError, match="generate.main.settings"):
        run(project, "oracle", monkeypatch)


def test_changing_a_sampling_parameter_misses_the_cache(tmp_path: Path, monkeypatch):
    project = write_project(tmp_path, {"echo": {"backend": "echo"}}, consistency_n=1)
    run(project, "echo", monkeypatch)
    write_project(tmp_path, {"echo": {"backend": "echo"}}, consistency_n=1, max_new_tokens=9)
    result, _ = run(project, "echo", monkeypatch)
    assert result.summary["total"]["cached"] == 0
    rows = read_generations(project / "results" / "generations" / "echo" / "orderprobe" / "zero_shot.parquet")
    main = [r for r in rows if r["pass"] == "main"]
    assert [r["item_id"] for r in main[:2]] == ["zh-CN/0000/ABCD", "zh-CN/0000/BACD"]
    assert main[0]["text"] == "画蛇添足" and main[1]["text"] == "蛇画添足"  # echo returns the scrambled input


def test_random_and_majority_skip_non_classification_tasks_and_say_why(tmp_path: Path, monkeypatch):
    project = write_project(tmp_path, {"majority": {"backend": "majority"}})
    result, lines = run(project, "majority", monkeypatch)
    assert result.summary["total"]["requests"] == 0
    assert any("skipped: majority: not a classification task (declared by the benchmark)" in line for line in lines)
    info = json.loads((project / "results/generations/majority/generation_info.json").read_text(encoding="utf-8"))
    assert len(info["skipped_jobs"]) == len(SETTINGS) * 2 and info["tables"] == {}


def test_unknown_model_and_missing_prompts_are_clear_errors(tmp_path: Path, monkeypatch):
    project = write_project(tmp_path, {"oracle": {"backend": "oracle"}})
    with pytest.raises(IdiombenchError, match=r"unknown model 'nope' \(models in params: oracle\)"):
        run(project, "nope", monkeypatch)
    prompts = project / "results" / "prompts" / "orderprobe"
    (prompts / "render_stats.json").unlink()  # render's completion record: without it, not render's output
    with pytest.raises(
        IdiombenchError,
        match=r"^results/prompts/orderprobe is incomplete \(no render_stats.json, "
        r"which its stage writes last\): run `idiombench render orderprobe` first$",
    ):
        run(project, "oracle", monkeypatch)
    for path in prompts.iterdir():
        path.unlink()
    (prompts / "render_stats.json").write_text("{}", encoding="utf-8")
    with pytest.raises(IdiombenchError, match=r"no prompt tables \(run `idiombench render orderprobe` first\)"):
        run(project, "oracle", monkeypatch)


def test_a_prompt_without_its_item_names_the_file_and_row(tmp_path: Path, monkeypatch):
    from gen_project import orderprobe_items
    from idiombench.core.items import write_items

    project = write_project(tmp_path, {"oracle": {"backend": "oracle"}})
    write_items(project / "data/processed/orderprobe/restore.parquet", orderprobe_items()[1:])
    with pytest.raises(
        IdiombenchError,
        match=r"cot.parquet, row 0: prompt orderprobe/restore/cot/zh-CN/0000/ABCD: "
        r"item zh-CN/0000/ABCD is not in",
    ):
        run(project, "oracle", monkeypatch)


def test_output_is_complete_or_absent(tmp_path: Path, monkeypatch):
    """A failing backend leaves the previous output untouched and no staging directory."""
    project = write_project(tmp_path, {"oracle": {"backend": "oracle"}})
    run(project, "oracle", monkeypatch)
    out = project / "results" / "generations" / "oracle"
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}

    from idiombench.core.generation_types import BackendBase

    class Broken(BackendBase):
        def identity(self):
            return {"backend": "broken"}

        def generate(self, requests):
            raise RuntimeError("device lost")

        def close(self):
            pass

    with pytest.raises(RuntimeError, match="device lost"):
        run(project, "oracle", monkeypatch, backend=Broken())
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert [p.name for p in out.parent.iterdir()] == ["oracle"]


def test_model_configs_the_stage_refuses(tmp_path: Path, monkeypatch):
    project = write_project(
        tmp_path,
        {
            "cuda0": {"backend": "hf", "model": "x", "device": "cuda", "gpus": 0},
            "two": {"backend": "hf", "model": "x", "gpus": 2},
        },
    )
    with pytest.raises(IdiombenchError, match="device cuda needs gpus >= 1"):
        run(project, "cuda0", monkeypatch)
    with pytest.raises(IdiombenchError, match="the hf backend runs on one GPU"):
        run(project, "two", monkeypatch)


def test_cli_reports_bad_input_in_one_line(tmp_path: Path, monkeypatch):
    from typer.testing import CliRunner

    from idiombench.cli import app

    project = write_project(tmp_path, {"oracle": {"backend": "oracle"}})
    monkeypatch.chdir(project)
    result = CliRunner().invoke(app, ["generate", "--model", "nope"])
    assert result.exit_code == 2
    assert "unknown model 'nope' (models in params.yaml: oracle)" in result.output
    assert "Traceback" not in result.output
    result = CliRunner().invoke(app, ["generate", "--model", "oracle"])
    assert result.exit_code == 0, result.output
    assert (project / "results" / "generations" / "oracle" / "orderprobe" / "cot.parquet").is_file()


def test_batches_follow_the_given_length_and_keep_content_order():
    # the length function (the hf backend's token count) decides the order, then the key
    requests = [request(f"k{i}", "x" * (10 - i)) for i in range(6)]
    tokens = {f"k{i}": [3, 1, 2, 1, 3, 2][i] for i in range(6)}
    batches = make_batches(requests, 2, lambda r: tokens[r.key])
    assert [[r.key for r in b] for b in batches] == [["k1", "k3"], ["k2", "k5"], ["k0", "k4"]]
    # by default a character estimate: shortest text first
    assert [r.key for r in make_batches(requests, 6)[0]] == ["k5", "k4", "k3", "k2", "k1", "k0"]


def test_batch_size_auto_is_resolved_by_the_hf_backend_and_recorded(
    tmp_path: Path, monkeypatch, tiny_chat_model: Path, model_dtype: str
):
    from idiombench.generation.backends.hf import CPU_AUTO_BATCH

    model = {
        "backend": "hf",
        "model": str(tiny_chat_model),
        "device": "cpu",
        "batch_size": "auto",
        "dtype": model_dtype,
        "benchmarks": ["orderprobe"],
    }
    project = write_project(tmp_path, {"tiny": model}, max_new_tokens=2)
    _result, lines = run(project, "tiny", monkeypatch)
    assert f"generate tiny: batch_size auto -> {CPU_AUTO_BATCH} (device cpu: the CPU default {CPU_AUTO_BATCH})" in lines
    assert "hf: dynamic KV cache (cache_implementation auto on cpu)" in lines
    info = json.loads(
        (project / "results" / "generations" / "tiny" / "generation_info.json").read_text(encoding="utf-8")
    )
    assert info["batch_size"] == CPU_AUTO_BATCH and info["config"]["batch_size"] == "auto"
    # the resolved batch size is part of the identity (the cache key), and the report's title page
    # names every setting the outputs were generated with
    assert info["identity"]["batch_size"] == CPU_AUTO_BATCH
    import torch

    from idiombench.stages.report import model_lines

    kernels = info["identity"]["kernels"]
    assert kernels.startswith(torch.backends.cpu.get_cpu_capability())
    assert (
        f"generated with dtype {model_dtype}, device cpu, kernels {kernels}, cache_implementation dynamic, "
        f"attn_implementation sdpa, batch_size {CPU_AUTO_BATCH}, torch_version {torch.__version__}, "
        f"transformers_version "
    ) in model_lines(load_params(project / "params.yaml"))[0]


def test_batch_size_auto_is_for_the_hf_backend_only(tmp_path: Path):
    project = write_project(tmp_path, {"oracle": {"backend": "oracle", "batch_size": "auto"}})
    with pytest.raises(ConfigError, match=r"models\.oracle\.batch_size: expected an integer, got 'auto'"):
        load_params(project / "params.yaml")


def upgraded(module: str):
    def change(monkeypatch) -> None:
        monkeypatch.setattr(__import__(module), "__version__", "99.0.0")

    return change


def _other_capability() -> str:
    """A PyTorch CPU capability other than this machine's (AVX2 on AVX512 machines, else AVX512)."""
    import torch

    return "AVX512" if torch.backends.cpu.get_cpu_capability() == "AVX2" else "AVX2"


def another_cpu(monkeypatch) -> None:
    import torch

    other = _other_capability()
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: other)


# (a setting, params that change it or a change of the machine, what the identity then says)
OUTPUT_SETTINGS = [
    ("cache_implementation", {"cache_implementation": "static"}, {"cache_implementation": "static"}),
    ("batch_size", {"batch_size": 3}, {"batch_size": 3}),
    ("attn_implementation", {"attn_implementation": "eager"}, {"attn_implementation": "eager"}),
    ("kernels", another_cpu, {"kernels": _other_capability()}),
    ("transformers_version", upgraded("transformers"), {"transformers_version": "99.0.0"}),
    ("torch_version", upgraded("torch"), {"torch_version": "99.0.0"}),
]


@pytest.fixture(scope="module")
def cached_tiny(tmp_path_factory: pytest.TempPathFactory, tiny_chat_model: Path, model_dtype: str):
    """(a project whose tiny hf model generated everything once, its model entry, the request
    count): a rerun with unchanged settings is all cache hits."""
    model = {
        "backend": "hf",
        "model": str(tiny_chat_model),
        "device": "cpu",
        "dtype": model_dtype,
        "batch_size": 4,
        "cache_implementation": "dynamic",
        "attn_implementation": "sdpa",
        "benchmarks": ["orderprobe"],
    }
    project = write_project(tmp_path_factory.mktemp("cached-tiny"), {"tiny": model}, max_new_tokens=2, consistency_n=1)
    with pytest.MonkeyPatch.context() as monkeypatch:
        first, _ = run(project, "tiny", monkeypatch)
        total = first.summary["total"]["requests"]
        assert first.summary["total"]["generated"] == total > 0
        assert run(project, "tiny", monkeypatch)[0].summary["total"]["cached"] == total
    return project, model, total


@pytest.mark.parametrize("change, expected", [s[1:] for s in OUTPUT_SETTINGS], ids=[s[0] for s in OUTPUT_SETTINGS])
def test_a_setting_that_can_change_greedy_outputs_misses_the_cache(
    cached_tiny, tmp_path: Path, monkeypatch, model_dtype: str, change, expected: dict
):
    # Each of these moved greedy tokens in bfloat16 (bench/greedy_identity.py): an output
    # cached under one must never be served under another (cached_tiny: unchanged, all hit).
    import shutil

    cached, model, total = cached_tiny
    project = tmp_path / "project"
    shutil.copytree(cached, project)
    if callable(change):
        change(monkeypatch)
    else:
        write_project(project, {"tiny": {**model, **change}}, max_new_tokens=2, consistency_n=1)
    changed, _ = run(project, "tiny", monkeypatch)
    assert changed.summary["total"]["cached"] == 0 and changed.summary["total"]["generated"] == total
    identity = json.loads((project / "results/generations/tiny/generation_info.json").read_text("utf-8"))["identity"]
    assert {key: identity[key].split(",")[0] if key == "kernels" else identity[key] for key in expected} == expected
    assert identity["dtype"] == model_dtype and identity["torch_version"]


def test_the_option_order_pass_takes_the_rotations_and_only_the_rotated_items(default_params):
    from idiombench.core.generation_types import item_context
    from idiombench.core.items import Item
    from idiombench.generation.config import GenerateConfig
    from idiombench.stages.generate import build_rows
    from idiombench.templating.prompts import Prompt

    config = default_params.benchmark("g-idiomalign")
    generate = GenerateConfig.model_validate(
        {
            "main": {"max_new_tokens": 12},
            "extra": {"order": {"max_new_tokens": 12, "rotate_options": True}, "samples": {"temperature": 0.7, "n": 2}},
        }
    )
    sections = default_params.benchmarks.model_copy(
        update={"g_idiomalign": config.model_copy(update={"generate": generate})}
    )
    params = default_params.model_copy(update={"benchmarks": sections})
    choice = Item("q", "g-idiomalign", "mcq", "en", "src", choices=("w", "x", "y", "z"), answer="B")
    free = Item("g", "g-idiomalign", "gloss_generation", "en", "src")

    def prompt(item: Item, setting: str, rotation: int = 0) -> tuple[Prompt, object]:
        shown = item_context(item, setting, rotation)
        p = Prompt(
            "g-idiomalign",
            item.task,
            setting,
            item.item_id,
            "en",
            (Message("user", f"{shown.choices}"),),
            "t",
            "h",
            rotation=rotation,
        )
        return p, shown

    joined = [prompt(choice, "mcq", r) for r in range(4)] + [prompt(free, "no_gloss")]
    rows = build_rows(params, {"g-idiomalign": joined}, {"backend": "test"})
    by_pass = {}
    for row in rows:
        by_pass.setdefault(row.pass_name, []).append((row.prompt.item_id, row.prompt.rotation))
    assert sorted(by_pass["main"]) == [("g", 0), ("q", 0)]  # the prompts as released only
    assert sorted(by_pass["samples"]) == [("g", 0), ("g", 0), ("q", 0), ("q", 0)]
    assert sorted(by_pass["order"]) == [("q", r) for r in range(4)]  # every rotation, the rotated item only
    order = {row.prompt.rotation: row.request for row in rows if row.pass_name == "order"}
    main = next(row.request for row in rows if row.pass_name == "main" and row.prompt.item_id == "q")
    assert order[0].key == main.key  # rotation 0 with main's sampling: the same request, generated once
    assert order[2].item.answer == "D" and order[2].item.choices == ("y", "z", "w", "x")
