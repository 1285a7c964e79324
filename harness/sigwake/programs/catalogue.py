"""The cases and what each says about itself next to its code (repro/lib/facts.h):
what is known of kernels for it, with its source and the commit that changed
it, the evidence that defines it and the evidence a report shows, the kernel
options it needs. Read from the programs of this machine's build
(`PROGRAM --list --json`) and handed to whatever judges or reports."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from ..core import schema
from ..core.verdicts import Verdict

Version = tuple[int, int]
Release = tuple[int, int, int]  # a stable release: 6.18.2


@dataclass(frozen=True)
class Expectation:
    before: Verdict  # on kernels older than `since`
    after: Verdict  # from `since` on
    since: Version | None  # None: the same on every kernel (`before` then names the bug of a fix no release dates)
    source: str
    privileges: tuple[str, ...] | None = None  # the passes it speaks of; None: every pass
    origins: tuple[str, ...] | None = None  # the kernel origins it speaks of (debian, file, host); None: all
    commit: str | None = None  # the commit that changed it at `since`
    stable: tuple[Release, ...] = ()  # stable releases from which their branch has `after` (before `since`)

    def scope(self) -> str:
        """The passes and kernel origins it speaks of, in words ("passes user-paranoid3; debian kernels"); ""
        when it speaks of every one."""
        return "; ".join([*([f"passes {', '.join(self.privileges)}"] if self.privileges else []),
                          *([f"{', '.join(self.origins)} kernels"] if self.origins else [])])

    def applies(self, privilege: str, origin: str) -> bool:
        return ((self.privileges is None or privilege in self.privileges)
                and (self.origins is None or origin in self.origins))


@dataclass(frozen=True)
class CaseFacts:
    name: str
    program: str
    expected: tuple[Expectation, ...]  # narrower first: the first that applies decides
    defining: tuple[str, ...]  # evidence compared beyond the verdict word
    shown: tuple[str, ...]  # evidence a report's cell shows, in this order
    kconfig: tuple[str, ...]  # kernel options it needs
    peers: tuple[str, ...] = ()  # upstream selftest programs whose tests it is compared with
    cpus: int = 1  # the CPUs it needs online: with fewer it is unsupported, and the boot's vCPUs are why

    @property
    def opens_perf_events(self) -> bool:
        """It needs CONFIG_PERF_EVENTS: what is known of perf's policy on whole kernels speaks of it."""
        return "CONFIG_PERF_EVENTS" in self.kconfig

    def short_of_cpus(self, cpus: int) -> bool:
        """A run on `cpus` vCPUs (0: not known) gave it fewer than it needs."""
        return 0 < cpus < self.cpus


@dataclass(frozen=True)
class Catalogue:
    cases: dict[str, CaseFacts]  # in the programs' order

    def facts(self, case: str) -> CaseFacts | None:
        return self.cases.get(case)

    def shown(self, case: str) -> tuple[str, ...]:
        found = self.cases.get(case)
        return found.shown if found else ()

    def peers_of(self, program: str) -> list[CaseFacts]:
        """The cases an upstream selftest program's tests are compared with."""
        return [c for c in self.cases.values() if program in c.peers]

    def cases_of(self, programs: list[str], globs: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
        """Each program's cases, in order (a program the facts do not know: none). With `globs` (run --case), only
        the runs they name: a case by its name, a program without cases by its own; a program left with none is
        left out. Case names are [a-z0-9_]: a name is a glob naming itself alone."""
        every = {p: tuple(c.name for c in self.cases.values() if c.program == p) for p in programs}
        if not globs:
            return every

        def named(name: str) -> bool:
            return any(fnmatchcase(name, g) for g in globs)
        return {p: tuple(filter(named, cases)) for p, cases in every.items() if any(map(named, cases or (p,)))}

    def named_runs(self, programs: list[str], globs: tuple[str, ...]) -> tuple[str, ...]:
        """The runs `globs` name, by name (what the guest is given: it matches names, never globs)."""
        return tuple(name for program, cases in self.cases_of(programs, globs).items() for name in cases or (program,))

    def unmatched(self, globs: tuple[str, ...], programs: list[str]) -> list[str]:
        """The globs that name no run of `programs`."""
        return [g for g in globs if not self.cases_of(programs, (g,))]

    def defining(self, case: str) -> tuple[str, ...]:
        found = self.cases.get(case)
        return found.defining if found else ()


class CatalogueError(Exception):
    pass


def _version(text: str | None) -> Version | None:
    if text is None:
        return None
    major, minor = text.split(".")
    return int(major), int(minor)


def _release(text: str) -> Release:
    major, minor, patch = text.split(".")
    return int(major), int(minor), int(patch)


def _tuple(words: list[str] | None) -> tuple[str, ...] | None:
    return None if words is None else tuple(words)


def parse(program: str, text: str) -> list[CaseFacts]:
    """One program's `--list --json`, checked against schemas/case-facts.v5.json."""
    try:
        data = json.loads(text)
        schema.check("case-facts", data)
    except ValueError as e:
        raise CatalogueError(f"{program} --list --json: {e}") from None
    return [CaseFacts(
        c["name"], program,
        tuple(Expectation(Verdict(e["before"]), Verdict(e["after"]), _version(e["since"]), e["source"],
                          _tuple(e["passes"]), _tuple(e["origins"]), e["commit"],
                          tuple(_release(r) for r in e["stable"])) for e in c["expected"]),
        tuple(c["defining"]), tuple(c["shown"]), tuple(c["kconfig"]),
        tuple(c.get("peers", ())), c.get("cpus", 1)) for c in data["cases"]]


def read(programs: dict[str, Path]) -> Catalogue:
    """Every case of these programs (built for this machine: they are run here)."""
    cases: dict[str, CaseFacts] = {}
    for program, path in programs.items():
        done = subprocess.run([str(path), "--list", "--json"], capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise CatalogueError(f"{path} --list --json failed ({done.returncode}): {done.stderr.strip()}")
        for case in parse(program, done.stdout):
            if case.name in cases:
                raise CatalogueError(f"case {case.name} is declared by {cases[case.name].program} and {program}")
            cases[case.name] = case
    return Catalogue(cases)
