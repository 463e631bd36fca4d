"""Base class of every params.yaml section, and the one pattern of a configured name."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict
from pydantic_core import PydanticCustomError

# A configured name that becomes a path component, a Snakemake wildcard or a shell word (model
# keys, pass names, settings, tasks, benchmark names): letters, digits, '.', '_' and '-', not
# starting with '.' or '-' (no hidden file, no '..', no command-line option), at most 64
# characters. Such a name can neither leave its folder nor change a shell command.
NAME_RULE = "letters, digits, '.', '_' and '-', not starting with '.' or '-', at most 64 characters"
NAME_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}")
# Model keys and benchmark names are also params paths for DVC (`models.<key>`,
# `benchmarks.<name>.build`), which reads every '.' as a nesting level: no '.' in them.
KEY_RULE = "letters, digits, '_' and '-', not starting with '-', at most 64 characters"
KEY_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,63}")


def name_problem(value: object, *, key: bool = False) -> str | None:
    """None when `value` is a valid name (a params key, with `key`), else what is wrong."""
    pattern, rule = (KEY_PATTERN, KEY_RULE) if key else (NAME_PATTERN, NAME_RULE)
    if isinstance(value, str) and pattern.fullmatch(value):
        return None
    return f"{value!r} is not a valid name (expected {rule})"


INVALID_NAME = "invalid_name"  # the pydantic error type of a bad name (config.py words it)
INVALID_VARIABLE = "invalid_variable"  # the pydantic error type of a bad environment variable name
VARIABLE_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def _name(value: str) -> str:
    problem = name_problem(value)
    if problem:
        raise PydanticCustomError(INVALID_NAME, problem)
    return value


def _key(value: str) -> str:
    problem = name_problem(value, key=True)
    if problem:
        raise PydanticCustomError(INVALID_NAME, problem)
    return value


def _variable(value: str) -> str:
    if not VARIABLE_PATTERN.fullmatch(value):
        # never quoted: a value that is not a variable name is most likely the key itself
        raise PydanticCustomError(
            INVALID_VARIABLE,
            "must name an environment variable (letters, digits and '_', "
            "not starting with a digit), not hold the key itself",
        )
    return value


Name = Annotated[str, AfterValidator(_name)]  # a setting, pass or task name
Key = Annotated[str, AfterValidator(_key)]  # a model key or a benchmark name
Variable = Annotated[str, AfterValidator(_variable)]  # the name of an environment variable (api_key_env)


class StrictModel(BaseModel):
    """Unknown keys are errors and values are not coerced silently (a string is not a bool)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, populate_by_name=True)


def no_repeats(values: list[str]) -> list[str]:
    """Validator body for list params whose entries must be unique (settings, tasks)."""
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise ValueError(f"listed more than once: {', '.join(repeated)}")
    return values
