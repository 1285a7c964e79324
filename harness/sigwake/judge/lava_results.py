"""What a LAVA lab shows for each run of a case: the judgement's outcome of that run's verdict on that
kernel (a known failure, such as not-delivered before the fix, is a pass there, as is a known refusal; a
refusal nothing explains, a skip; anything else, a fail). LAVA records results while the job runs, from the console,
so the guest must say them: each job's initramfs carries this table, and the guest prints
`# sigwake.lava=<result> <program>.<case> [<pass> run <k>]` after each run, looking its verdict up
in the table's rows for the greatest release not above its own (repro/guest/lava_table.h). The
harness still judges the job's whole log itself, splats and crashes included."""

from __future__ import annotations

from ..core.verdicts import Verdict
from ..programs.catalogue import Catalogue, Version
from .expectations import expected, rows
from .judgement import Outcome, verdict_judged

RESULT = {Outcome.PASS: "pass", Outcome.XFAIL: "pass", Outcome.SKIP: "skip"}  # LAVA's words; the rest: fail
ANY_CASE = "*"  # a program the catalogue does not know, run whole: what is known of every case


def releases(catalogue: Catalogue) -> list[Version]:
    """The releases at which what is known changes: the oldest kernel, then every fact's `since`, and each
    stable branch a fact's change was backported to. The guest looks up its major.minor only, so on such a
    branch the table knows nothing of that case (the patch level decides, and the harness's own judgement of
    the log has it); a case's verdict there passes when it is one of the good words."""
    since = {row.since for name in (*catalogue.cases, ANY_CASE) for row in rows(catalogue, name) if row.since}
    branches = {(r[0], r[1]) for name in catalogue.cases for row in rows(catalogue, name) for r in row.stable}
    return [(0, 0), *sorted(since | branches)]


def shown(catalogue: Catalogue, name: str, privilege: str, release: str, origin: str, verdict: Verdict,
          cpus: int = 0) -> str:
    """LAVA's word for one run's verdict: a refusal that is what is known of the kernel (Debian's at
    perf_event_paranoid 3) is the kernel's known behaviour, a pass; one nothing explains, or one of a case
    needing more CPUs than the job's `cpus` (0: not known), a skip."""
    outcome = verdict_judged(catalogue, name, privilege, release, origin, verdict)[0]
    known = expected(catalogue, name, release, privilege, origin)
    if outcome is Outcome.SKIP and known is not None and known.verdict is verdict:
        return "pass"
    facts = catalogue.facts(name)
    if verdict is Verdict.UNSUPPORTED and facts is not None and facts.short_of_cpus(cpus):
        return "skip"
    return RESULT.get(outcome, "fail")


def passing(catalogue: Catalogue, name: str, privilege: str, release: str, origin: str,
            cpus: int = 0) -> tuple[str, ...]:
    """"<verdict>:<result>" for each kernel verdict LAVA is to show as pass or skip."""
    words = (f"{v}:{shown(catalogue, name, privilege, release, origin, v, cpus)}" for v in Verdict
             if v.is_kernel_verdict)
    return tuple(w for w in words if not w.endswith(":fail"))


def lava_table(catalogue: Catalogue, privileges: tuple[str, ...], origin: str, cpus: int = 0) -> str:
    """One row per release, pass and case, `<major.minor> <pass> <program>.<case> <verdict>:<result>...`,
    and a row only where a release changes what the one before it said; `cpus`: the job's vCPUs."""
    names = {f"{facts.program}.{facts.name}": facts.name for facts in catalogue.cases.values()}
    names[ANY_CASE] = ANY_CASE
    said: dict[tuple[str, str], tuple[str, ...]] = {}
    lines = []
    for major, minor in releases(catalogue):
        release = f"{major}.{minor}"
        for privilege in privileges:
            for guest_name, name in names.items():
                words = passing(catalogue, name, privilege, release, origin, cpus)
                if said.get((privilege, guest_name)) != words:
                    said[(privilege, guest_name)] = words
                    lines.append(" ".join((release, privilege, guest_name, *words)))
    return "\n".join(lines) + "\n"
