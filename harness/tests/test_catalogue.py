"""Each case carries its own facts next to its code (repro/lib/facts.h): `PROGRAM --list --json` prints them,
checked against schemas/case-facts.v4.json, and the catalogue of every program is what the judgement, validate
and the reports read. These tests hold the programs and the catalogue to that."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sigwake.kernels import kconfig
from sigwake.programs.binaries import Binaries
from sigwake.programs.catalogue import Catalogue, CatalogueError, parse, read
from sigwake.commands.cli import REPO
from sigwake.store.store import load_results
from sigwake.core.model import NEVER_RAN
from sigwake.core.verdicts import Verdict


def fragment_options(name: str) -> set[str]:
    """The options a kernel-configs fragment turns on."""
    return {o for o, v in kconfig.read_fragment(REPO / "kernel-configs" / f"{name}.config").options.items() if v == "y"}


def test_every_listed_case_has_its_facts_in_the_same_order(built: Binaries, catalogue: Catalogue) -> None:
    listed = [line.split()[0] for path in built.reproducers.values()  # a name, then the grants it asks for
              for line in subprocess.run([str(path), "--list"], capture_output=True, text=True,
                                         check=True).stdout.splitlines()]
    assert listed == list(catalogue.cases)
    for case in catalogue.cases.values():
        assert case.expected, f"{case.name}: nothing is known of it"
        assert all(e.source for e in case.expected)
        # perf's signal path, or fcntl's owner path through a socket's urgent data (urgent_sigurg: inet.config)
        # or an input device's events (evdev_sigio: input.config)
        assert case.opens_perf_events or any(set(case.kconfig) <= fragment_options(f) for f in ("inet", "input")), \
            case.name


def test_a_variant_written_once_is_two_cases_with_their_own_facts(catalogue: Catalogue) -> None:
    overflow, watermark = catalogue.cases["setown_ex_tid_overflow"], catalogue.cases["setown_ex_tid_watermark"]
    assert overflow.program == watermark.program == "setown_ex_tid"
    assert overflow.expected[0].since is None and overflow.expected[0].after is Verdict.DELIVERED
    fix = watermark.expected[0]
    assert (fix.since, fix.commit, fix.before, fix.after) == ((6, 10), "fd20bb51ed39", Verdict.NOT_DELIVERED,
                                                             Verdict.DELIVERED)
    assert [c for c in catalogue.cases if c.startswith("set_output_sigio_")] == [
        "set_output_sigio_fasync_on_target", "set_output_sigio_fasync_on_source", "set_output_sigio_fasync_on_both"]


@pytest.mark.parametrize("arch", sorted(kconfig.ARCH_FRAGMENTS))
def test_every_option_a_case_needs_is_in_the_default_kernel_config(catalogue: Catalogue, arch: str) -> None:
    # or the case claims nothing but a refusal of kernels built here (origin "file"): there its refusal is a skip
    merged: dict[str, str] = {}
    for path in kconfig.default_fragments(REPO / "kernel-configs", arch):
        merged |= kconfig.read_fragment(path).options
    missing = {f"{c.name}: {option}" for c in catalogue.cases.values() for option in c.kconfig
               if merged.get(option) != "y" and any((e.origins is None or "file" in e.origins)
                                                    and Verdict.UNSUPPORTED not in (e.before, e.after)
                                                    for e in c.expected)}
    assert not missing, "kernels built from source would lack what these cases need: " + ", ".join(sorted(missing))
    beyond = {c.name for c in catalogue.cases.values() if any(merged.get(o) != "y" for o in c.kconfig)}
    assert beyond == {"urgent_sigurg_pgrp", "urgent_sigurg_setsig",  # CONFIG_INET: kernel-configs/inet.config
                      "evdev_sigio_irq", "evdev_sigio_written"}  # CONFIG_INPUT_EVDEV: kernel-configs/input.config


def test_every_stored_case_is_known_to_the_catalogue(catalogue: Catalogue) -> None:
    """A case, or a program its boot ended before it ran (then only its program is known)."""
    records = [case for kernel in load_results(REPO / "results").results for case in kernel.reproducers]
    programs = {c.program for c in catalogue.cases.values()}
    unknown = {r.name for r in records if r.name not in catalogue.cases
               and not (r.name in programs and r.reason.startswith(NEVER_RAN))}
    assert records and not unknown, sorted(unknown)


def test_facts_that_break_the_schema_or_repeat_a_case_are_refused(built: Binaries, tmp_path: Path) -> None:
    good = {"schema": 1, "cases": [{"name": "a_case", "expected": [], "defining": [], "shown": [], "kconfig": []}]}
    assert [c.name for c in parse("prog", json.dumps(good))] == ["a_case"]
    bad = json.loads(json.dumps(good))
    bad["cases"][0]["expected"] = [{"before": "delivered", "after": "maybe", "since": None, "commit": None,
                                    "source": "s", "passes": None, "origins": None}]
    with pytest.raises(CatalogueError, match="prog --list --json: breaks case-facts schema 1 at cases/0/expected/0"):
        parse("prog", json.dumps(bad))
    with pytest.raises(CatalogueError, match="prog --list --json"):
        parse("prog", "not json")
    twice = {"one": built.reproducers["watermark_sigio"], "two": built.reproducers["watermark_sigio"]}
    with pytest.raises(CatalogueError, match="case watermark_sigio is declared by one and two"):
        read(twice)
    failing = tmp_path / "failing"
    failing.write_text("#!/bin/sh\necho broken >&2\nexit 3\n")
    failing.chmod(0o755)
    with pytest.raises(CatalogueError, match="failed \\(3\\): broken"):
        read({"failing": failing})


def test_a_boot_of_one_vcpu_leaves_out_the_programs_whose_cases_need_two(built: Binaries) -> None:
    """validate-patch's default set: what the boot's vCPUs can run (a program named on purpose runs anyway)."""
    kept, left_out = built.within_cpus(1)
    assert left_out == {"inherit_time": 2}
    assert "inherit_time" not in kept.reproducers and "watermark_sigio" in kept.reproducers
    assert built.within_cpus(2) == (built, {})
