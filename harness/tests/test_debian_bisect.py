"""Bisection across Debian's real amd64 kernel packages, oldest to newest by
Debian version: the change must be found between the last 6.1 package and the
first package of a release with the fix (v6.10 and later), in about log2(N) boots."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from sigwake.judge import expectations
from sigwake.programs.binaries import Binaries
from sigwake.commands.bisect import Probe, bisect_debian, debian_packages
from sigwake.targets.options import RunOptions
from sigwake.kernels.kernels import KernelCache
from sigwake.core.progress import Progress
from sigwake.targets.qemu import Accel
from sigwake.core.verdicts import Verdict

pytestmark = pytest.mark.slow


def test_debian_packages_bisect_to_the_first_fixed_release(built: Binaries, accel: Accel, cache_root: Path,
                                                           tmp_path: Path) -> None:
    probe = Probe(built.select(["watermark_sigio"]), "watermark_sigio", "watermark_sigio",
                  RunOptions(accel, repeat=3, privileges=("root",)), tmp_path)
    report = bisect_debian(KernelCache(cache_root), "amd64", probe, Progress(quiet=True))
    assert (report.old, report.new) == (Verdict.NOT_DELIVERED, Verdict.DELIVERED)
    (first,) = report.first_changed
    last_old = report.last_old.split()[0].removeprefix("linux-image-").removeprefix("linux-binary-")
    first_new = first.split()[0].removeprefix("linux-image-").removeprefix("linux-binary-")
    assert expectations.upstream_version(last_old) == (6, 1), report.last_old
    fixed = expectations.upstream_version(first_new)
    assert fixed is not None and fixed >= (6, 10), first
    assert all("x3" in s.note for s in report.steps), report.steps  # every boot judged, unanimously
    candidates = len(debian_packages(KernelCache(cache_root), "amd64", Progress(quiet=True)))
    assert len(report.steps) <= math.ceil(math.log2(candidates)) + 2
