"""params.yaml validation: one clear message naming each bad key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from idiombench.core.errors import ConfigError
from idiombench.pipeline.config import load_params, parse_params

ROOT = Path(__file__).resolve().parents[3]


def raw_params() -> dict:
    return yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))


def test_default_params_validate():
    params = load_params(ROOT / "params.yaml")
    assert params.profile == "default"
    assert params.benchmark("orderprobe").build.languages == ["zh-CN", "zh-TW", "ja", "ko"]
    assert params.benchmark("g-idiomalign") is params.benchmarks.g_idiomalign


def test_unknown_key_is_named_with_allowed_keys():
    raw = raw_params()
    raw["benchmarks"]["orderprobe"]["build"]["dedup"] = True
    with pytest.raises(ConfigError) as info:
        parse_params(raw)
    message = str(info.value)
    assert "benchmarks.orderprobe.build.dedup: unknown key" in message
    assert "dedupe" in message  # the allowed keys are listed


def test_wrong_type_is_named_with_value():
    raw = raw_params()
    raw["benchmarks"]["orderprobe"]["build"]["dedupe"] = "yes please"
    with pytest.raises(ConfigError) as info:
        parse_params(raw)
    assert "benchmarks.orderprobe.build.dedupe: expected true or false, got 'yes please'" in str(info.value)


def test_missing_benchmark_is_named():
    raw = raw_params()
    del raw["benchmarks"]["semanticqa"]
    with pytest.raises(ConfigError) as info:
        parse_params(raw)
    assert "benchmarks.semanticqa: missing" in str(info.value)


def test_bad_literal_and_several_errors_in_one_message():
    raw = raw_params()
    raw["benchmarks"]["orderprobe"]["build"]["languages"] = ["zh-CN", "fr"]
    raw["seed"] = "zero"
    with pytest.raises(ConfigError) as info:
        parse_params(raw)
    message = str(info.value)
    assert "benchmarks.orderprobe.build.languages.1:" in message and "'fr'" in message
    assert "seed: expected an integer, got 'zero'" in message


def test_missing_file_and_bad_yaml(tmp_path: Path):
    with pytest.raises(ConfigError, match="no such params file"):
        load_params(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("profile: [unclosed\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_params(bad)


def test_cli_reports_config_error_without_traceback(tmp_path: Path):
    from typer.testing import CliRunner

    from idiombench.cli import app

    raw = raw_params()
    raw["benchmarks"]["orderprobe"]["build"]["dedupe"] = 3
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    result = CliRunner().invoke(app, ["check-params", "--params", str(path)])
    assert result.exit_code == 2
    assert "benchmarks.orderprobe.build.dedupe: expected true or false, got 3" in result.output
    assert "Traceback" not in result.output


def test_paper_profile_validates_and_has_the_same_sections():
    from idiombench.params.overlay import read_params_raw

    default = raw_params()
    paper = read_params_raw(ROOT / "overlays" / "paper.yaml")
    assert load_params(ROOT / "overlays" / "paper.yaml").profile == "paper"

    def keys(node, prefix=""):
        if not isinstance(node, dict):
            return set()
        out = set()
        for key, value in node.items():
            out.add(prefix + key)
            # The model lists (and which paper model each reproduces) differ between profiles by
            # design; a scoring role's keys depend on its kind (checked in test_scoring_config.py),
            # so only role names count.
            if key not in ("models", "reproduces") and prefix != "scoring.roles.":
                out |= keys(value, prefix + key + ".")
        return out

    assert keys(default) == keys(paper)


# Cross-key rules (issue 13, item 6): check-params reports them with params.yaml's key paths.
CONSISTENCY_CASES = [
    (
        "a model's benchmarks name an unknown benchmark",
        lambda raw: raw["models"].update(m={"backend": "oracle", "benchmarks": ["orderprobe", "nope"]}),
        "models.m.benchmarks.1: unknown benchmark 'nope'",
    ),
    (
        "a replay source names an unknown benchmark",
        lambda raw: raw["models"].update(
            r={"backend": "replay", "sources": [{"benchmark": "nope", "setting": "0-shot", "path": "x.jsonl"}]}
        ),
        "models.r.sources.0.benchmark: unknown benchmark 'nope'",
    ),
    (
        "the main pass restricted to settings",
        lambda raw: raw["benchmarks"]["semanticqa"]["generate"]["main"].update(settings=["0-shot"]),
        "benchmarks.semanticqa.generate.main.settings: must be null",
    ),
    (
        "an extra pass called main",
        lambda raw: raw["benchmarks"]["orderprobe"]["generate"]["extra"].update(main={"n": 2}),
        "benchmarks.orderprobe.generate.extra.main: an extra pass may not be called 'main'",
    ),
    (
        "device cuda with no GPU",
        lambda raw: raw["models"].update(g={"backend": "hf", "model": "x", "device": "cuda", "gpus": 0}),
        "models.g.gpus: device cuda needs gpus >= 1 (the job claims its GPUs), got 0",
    ),
    (
        "device cpu claiming GPUs",
        lambda raw: raw["models"].update(g={"backend": "hf", "model": "x", "device": "cpu", "gpus": 1}),
        "models.g.gpus: device cpu uses no GPU (expected 0), got 1",
    ),
    (
        "hf on two GPUs",
        lambda raw: raw["models"].update(g={"backend": "hf", "model": "x", "gpus": 2}),
        "models.g.gpus: the hf backend runs on one GPU",
    ),
    (
        "vllm's CPU KV cache with GPUs",
        lambda raw: raw["models"].update(v={"backend": "vllm", "model": "x", "gpus": 1, "cpu_kv_cache_gib": 4}),
        "models.v.cpu_kv_cache_gib: applies to gpus 0",
    ),
]


@pytest.mark.parametrize("change, expected", [c[1:] for c in CONSISTENCY_CASES], ids=[c[0] for c in CONSISTENCY_CASES])
def test_cross_key_rules_name_the_key(change, expected: str) -> None:
    raw = raw_params()
    change(raw)
    with pytest.raises(ConfigError) as info:
        parse_params(raw)
    message = str(info.value)
    assert expected in message and "\n" not in message


def test_cross_key_rules_accept_the_consistent_cases() -> None:
    raw = raw_params()
    raw["models"].update(
        gpu={"backend": "hf", "model": "x", "device": "cuda", "gpus": 1},
        cpu={"backend": "hf", "model": "x", "device": "cpu", "gpus": 0},
        auto={"backend": "hf", "model": "x", "device": "auto", "gpus": 1},
        tp={"backend": "vllm", "model": "x", "gpus": 4},
        sub={"backend": "oracle", "benchmarks": ["orderprobe", "semanticqa"]},
    )
    models = parse_params(raw).models
    assert {
        name: (models[name].backend, getattr(models[name], "device", None), models[name].gpus)
        for name in ("gpu", "cpu", "auto", "tp")
    } == {"gpu": ("hf", "cuda", 1), "cpu": ("hf", "cpu", 0), "auto": ("hf", "auto", 1), "tp": ("vllm", None, 4)}
    assert models["sub"].benchmarks == ["orderprobe", "semanticqa"]


def test_union_tags_are_left_out_of_key_paths() -> None:
    raw = raw_params()
    raw["models"]["o"] = {"backend": "oracle", "batch_size": 0}
    with pytest.raises(ConfigError, match=r"models\.o\.batch_size: Input should be greater than or equal to 1, got 0"):
        parse_params(raw)


def test_params_not_utf8_or_a_folder(tmp_path: Path) -> None:
    (tmp_path / "latin1.yaml").write_bytes(b"profile: caf\xe9\n")
    with pytest.raises(ConfigError, match=r"latin1.yaml: not UTF-8 text \(byte 0xe9 at offset 12"):
        load_params(tmp_path / "latin1.yaml")
    with pytest.raises(ConfigError, match="is a folder"):
        load_params(tmp_path)


def test_generate_defaults_fill_a_section_without_generate_only() -> None:
    """params' generate_defaults, merged onto the benchmark's own `generate`, where a section sets
    none (a plugin without a section gets its model's defaults the same way); a section that
    sets `generate` is taken as written; invalid defaults are reported once, at their key."""
    import copy

    from idiombench.core.yamlfile import load_yaml_file
    from idiombench.pipeline.config import parse_params

    raw = load_yaml_file(ROOT / "params.yaml")
    assert raw["generate_defaults"] == {"main": {"max_new_tokens": 16}}
    edited = copy.deepcopy(raw)
    del edited["benchmarks"]["orderprobe"]["generate"]
    orderprobe = parse_params(edited).benchmark("orderprobe").generate
    assert orderprobe.main.max_new_tokens == 16  # the profile's
    assert orderprobe.extra["consistency"].n == 5  # the rest: the benchmark's own default
    assert parse_params(raw).benchmark("g-idiomalign").generate.main.max_new_tokens == 12  # as written
    edited["generate_defaults"] = {"main": {"max_new_tokens": 0}}
    with pytest.raises(ConfigError) as error:
        parse_params(edited)
    assert "generate_defaults.main.max_new_tokens" in str(error.value)
    assert "benchmarks.orderprobe.generate" not in str(error.value)
