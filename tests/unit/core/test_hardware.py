"""dtype: auto picks bfloat16 on a CPU only where bf16 is computed natively (issue 9)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from idiombench.core.hardware import auto_dtype, cpu_bf16_native, cpu_flags
from idiombench.generation.backends.hf import choose_dtype

AVX512_BF16 = {"avx2", "avx512f", "avx512_bf16"}


@pytest.mark.parametrize(
    ("flags", "environ", "capability", "native", "why"),
    [
        (AVX512_BF16, {}, "AVX512", True, "avx512_bf16"),
        ({"avx2", "amx_bf16", "amx_tile"}, {}, "AVX512", True, "amx_bf16"),
        ({"avx2", "avx512f"}, {}, "AVX512", False, "no avx512_bf16"),
        ({"avx2"}, {}, "AVX2", False, "no avx512_bf16"),
        # the emulation of an AVX2-only CPU the project's docs describe
        (AVX512_BF16, {"ONEDNN_MAX_CPU_ISA": "AVX2"}, "AVX512", False, "ONEDNN_MAX_CPU_ISA=AVX2"),
        (AVX512_BF16, {}, "AVX2", False, "capability is AVX2"),
        (AVX512_BF16, {"ONEDNN_MAX_CPU_ISA": "avx512_core_bf16"}, "AVX512", True, "avx512_bf16"),
        (AVX512_BF16, {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE"}, "AVX512", False, "AVX512_CORE"),
    ],
)
def test_cpu_bf16_native(flags, environ, capability, native, why):
    got, reason = cpu_bf16_native(flags=flags, environ=environ, capability=capability)
    assert got is native and why in reason


def test_cpu_flags_reads_the_flags_line(tmp_path: Path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512_bf16\nbugs\t: x\n", encoding="utf-8")
    assert cpu_flags(info) == {"fpu", "avx2", "avx512_bf16"}
    assert cpu_flags(tmp_path / "missing") == set()


def test_auto_on_this_cpu_follows_the_detection(monkeypatch):
    import torch

    # The expectation from the raw facts, not from the code under test: the kernel's flags line
    # and PyTorch's own CPU capability (AVX2 where ATEN_CPU_CAPABILITY=avx2 emulates an older CPU).
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    cpuinfo = Path("/proc/cpuinfo")
    flags_line = re.search(r"^flags\s*:(.*)$", cpuinfo.read_text(encoding="utf-8"), re.M) if cpuinfo.is_file() else None
    has_bf16 = flags_line is not None and bool({"avx512_bf16", "amx_bf16"} & set(flags_line.group(1).split()))
    native = has_bf16 and torch.backends.cpu.get_cpu_capability().upper().startswith(("AVX512", "AMX"))
    assert auto_dtype("cpu").dtype == ("bfloat16" if native else "float32")
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    choice = auto_dtype("cpu")
    assert choice.dtype == "float32"
    assert ("ONEDNN_MAX_CPU_ISA=AVX2" if has_bf16 else "no avx512_bf16") in choice.reason


def test_explicit_bfloat16_on_an_emulating_cpu_is_kept_with_a_warning(monkeypatch):
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    choice = choose_dtype("bfloat16", "cpu")
    assert choice.dtype == "bfloat16" and "emulated" in choice.reason and "dtype: auto picks float32" in choice.reason
    assert choose_dtype("float32", "cpu").dtype == "float32"
    assert choose_dtype("auto", "cpu").dtype == "float32"
