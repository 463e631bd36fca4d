"""The fake `vllm.platforms`: `current_platform` as vLLM's CUDA platform answers through NVML
(vllm/platforms/cuda.py: `get_device_name(device_id)`, `get_device_capability(device_id)` ->
DeviceCapability(major, minor)). Tests set DEVICE_NAME and CAPABILITY."""

from __future__ import annotations

from typing import NamedTuple

DEVICE_NAME = "NVIDIA H100 80GB HBM3"
CAPABILITY = (9, 0)


class DeviceCapability(NamedTuple):
    major: int
    minor: int


class _Platform:
    device_name = "cuda"

    def get_device_name(self, device_id: int = 0) -> str:
        return DEVICE_NAME

    def get_device_capability(self, device_id: int = 0) -> DeviceCapability | None:
        return DeviceCapability(*CAPABILITY)


current_platform = _Platform()
