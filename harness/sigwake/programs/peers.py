"""The upstream perf selftests as peers of the reproducers: tools/testing/selftests/perf_events from Debian's
linux-source (the series sigwake already builds kernels and mutants from), extracted once into the cache and
built by Meson (the `selftests` option, repro/peers/meson.build) as they are."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..core.file_lock import held
from ..core.progress import Progress
from ..kernels.kernels import KernelCache

SERIES = "6.12"
# What each selftest needs of the machine beside the kernel (the guest probes it before they run,
# repro/guest/machine_probe.cc): sigtrap_threads' events are hardware breakpoints, remove_on_exec's count
# instructions. Without it a selftest fails or skips whatever the kernel does: not comparable there.
NEEDS = {"sigtrap_threads": ("breakpoint",), "remove_on_exec": ("pmu",), "watermark_signal": ()}
# Beside perf_events/, the kselftest harness its tests include as "../kselftest_harness.h".
MEMBERS = ("tools/testing/selftests/kselftest_harness.h", "tools/testing/selftests/kselftest.h",
           "tools/testing/selftests/perf_events")


def selftest_sources(cache: KernelCache, progress: Progress) -> Path:
    """tools/testing/selftests/perf_events of linux-source-<SERIES>, extracted once under the cache."""
    top = f"linux-source-{SERIES}"
    root = cache.root / "peers" / top
    wanted = root / top / "tools" / "testing" / "selftests" / "perf_events"
    extracted = root / ".extracted"  # written once tar has finished: a file seen mid-extraction says nothing
    if extracted.is_file():
        return wanted
    with held(root.with_name(f"{top}.lock"), progress, "the perf selftests' sources"):
        if extracted.is_file():  # another sigwake extracted them while we waited
            return wanted
        tarball = cache.source_tarball(SERIES, progress)
        progress.step(f"extracting the perf selftests from {tarball.name}")
        root.mkdir(parents=True, exist_ok=True)
        subprocess.run(["tar", "-xJf", str(tarball), "-C", str(root), *(f"{top}/{m}" for m in MEMBERS)], check=True,
                       timeout=900, capture_output=True)
        extracted.touch()
    return wanted
