"""make_backend imports a backend's module only when a model uses it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from idiombench.generation.backends import MODULES

SRC = Path(__file__).resolve().parents[3] / "src"


def test_every_backend_of_the_model_schema_has_a_module():
    from typing import get_args

    from idiombench.generation.config import ModelConfig

    union = get_args(ModelConfig)[0]
    names = {name for model in get_args(union) for name in get_args(model.model_fields["backend"].annotation)}
    assert names == set(MODULES)
    for module in set(MODULES.values()):
        assert (SRC / "idiombench" / "generation" / "backends" / f"{module}.py").is_file() or module in (
            "vllm",
            "openai",
        )


def test_cli_and_reference_backends_import_no_model_library():
    code = (
        "import sys\n"
        "import idiombench.cli\n"
        "from idiombench.benchmarks.registry import backend_hooks\n"
        "from idiombench.generation.backends import make_backend\n"
        "from idiombench.generation.config import ReferenceModel\n"
        "make_backend('o', ReferenceModel(backend='oracle'), benchmarks=backend_hooks()).identity()\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'vllm', 'openai', 'httpx') if m in sys.modules)\n"
        "print(heavy)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(SRC), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_every_backend_class_has_every_hook_the_stage_calls():
    """The generate stage calls each hook of core.generation_types.Backend directly (it never
    probes with getattr): a backend class gets the hooks it does not write from BackendBase."""
    import importlib
    import inspect

    from idiombench.core.generation_types import Backend, BackendBase

    hooks = {name for name in dir(Backend) if not name.startswith("_")} | set(Backend.__annotations__)
    assert {
        "prepare",
        "unsupported",
        "item_identity",
        "report",
        "summary",
        "describe",
        "prompt_length",
        "choose_batch_size",
        "batch_size_changes_outputs",
        "answers_from_items",
    } <= hooks
    classes = []
    for name in sorted(set(MODULES.values())):
        module = importlib.import_module(f"idiombench.generation.backends.{name}")
        for cls in vars(module).values():
            if inspect.isclass(cls) and cls.__module__ == module.__name__ and hasattr(cls, "generate"):
                classes.append(cls.__name__)
                assert issubclass(cls, BackendBase), f"{cls.__name__} does not inherit BackendBase"
                assert hooks <= set(dir(cls)), f"{cls.__name__} lacks {sorted(hooks - set(dir(cls)))}"
    assert sorted(classes) == ["HFBackend", "OpenAIBackend", "ReferenceBackend", "ReplayBackend", "VLLMBackend"]
