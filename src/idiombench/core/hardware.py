"""What the machine computes natively, for `dtype: auto`.

On a CPU, bfloat16 is fast only where the CPU has bf16 dot-product instructions
(AVX512-BF16 or AMX-BF16) and PyTorch/oneDNN are allowed to use them; elsewhere torch
emulates bf16 and runs about 4x slower than float32 (measured: bench/generation.py).
The environment variables that restrict the kernels (ATEN_CPU_CAPABILITY for ATen,
ONEDNN_MAX_CPU_ISA for oneDNN) are honoured, so an AVX2-only CPU can be emulated.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

CPU_BF16_FLAGS = ("avx512_bf16", "amx_bf16")
# oneDNN ISA names at or above the first one with bf16 dot products (oneDNN's dnnl_cpu_isa_t)
ONEDNN_BF16_ISAS = (
    "AVX512_CORE_BF16",
    "AVX512_CORE_AMX",
    "AVX512_CORE_AMX_FP16",
    "AVX10_1_512",
    "AVX10_1_512_AMX",
    "AVX10_1_512_AMX_FP16",
    "AVX10_2_512",
    "AVX10_2_512_AMX_2",
    "ALL",
)


@dataclass(frozen=True)
class DtypeChoice:
    dtype: str  # float32 | bfloat16 | float16
    reason: str  # in words, for the run log


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> set[str]:
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


def cpu_bf16_native(
    flags: set[str] | None = None, environ: dict[str, str] | None = None, capability: str | None = None
) -> tuple[bool, str]:
    """(native, why): whether bfloat16 matmuls run on bf16 instructions here."""
    environ = dict(os.environ) if environ is None else environ
    flags = cpu_flags() if flags is None else flags
    found = [f for f in CPU_BF16_FLAGS if f in flags]
    if not found:
        return False, "the CPU has no avx512_bf16/amx_bf16"
    isa = environ.get("ONEDNN_MAX_CPU_ISA", "").strip().upper()
    if isa and isa not in ONEDNN_BF16_ISAS:
        return False, f"ONEDNN_MAX_CPU_ISA={isa} excludes the bf16 kernels"
    if capability is None:
        import torch

        capability = torch.backends.cpu.get_cpu_capability()
    if not capability.upper().startswith(("AVX512", "AMX")):
        return False, f"PyTorch's CPU capability is {capability} (ATEN_CPU_CAPABILITY)"
    return True, f"the CPU has {'/'.join(found)} (PyTorch capability {capability})"


def auto_dtype(device: str) -> DtypeChoice:
    """The dtype `auto` means on this device: bfloat16 where it is computed natively
    (CUDA with bf16 support, a CPU with bf16 instructions), else float16 on older CUDA
    GPUs and float32 on the CPU."""
    import torch

    if device.startswith("cuda"):
        if torch.cuda.is_bf16_supported():
            return DtypeChoice("bfloat16", "auto: the CUDA device supports bfloat16")
        return DtypeChoice("float16", "auto: the CUDA device has no bfloat16, float16 instead")
    native, why = cpu_bf16_native()
    if native:
        return DtypeChoice("bfloat16", f"auto: bfloat16, {why}")
    return DtypeChoice("float32", f"auto: float32, {why} (bfloat16 would be emulated, ~4x slower)")
