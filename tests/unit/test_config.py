"""params.yaml validation: one clear message naming each bad key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from idiombench.config import load_params, parse_params
from idiombench.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


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
    from idiombench.overlay import read_params_raw

    default = raw_params()
    paper = read_params_raw(ROOT / "overlays" / "paper.yaml")
    assert load_params(ROOT / "overlays" / "paper.yaml").profile == "paper"

    def keys(node, prefix=""):
        if not isinstance(node, dict):
            return set()
        out = set()
        for key, value in node.items():
            out.add(prefix + key)
            # The model lists differ between profiles by design; a scoring role's keys
            # depend on its kind (checked in test_scoring_config.py), so only role names count.
            if key != "models" and prefix != "scoring.roles.":
                out |= keys(value, prefix + key + ".")
        return out

    assert keys(default) == keys(paper)
