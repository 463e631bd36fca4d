"""vllm.exceptions as in vLLM 0.32.0 (vllm/exceptions.py): the validation error is no ValueError."""

from __future__ import annotations

from typing import Any


class VLLMError(Exception):
    """Base class for all vLLM-specific errors."""


class VLLMClientError(VLLMError):
    """Errors caused by the client request (4xx)."""


class VLLMValidationError(VLLMClientError):
    def __init__(self, message: str, *, parameter: str | None = None, value: Any = None) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.value = value
