"""Kernel mutants generated over the whole signal path, not written from a list:
Coccinelle (Debian's spatch, the kernel's own semantic-patch tool) finds every
site of each operator in smpl/operators.cocci, and each site inside one of the
path's functions becomes one mutant per change made there: one small edit of
one span, with its own diff. Operators: a relational operator swapped (its
negation and its boundary), an if's condition negated or dropped, one side of
&& or || dropped, a statement deleted, a whole-number constant off by one, a
constant swapped with its siblings (POLL_*, POLL*, PIDTYPE_*, F_OWNER_*, SIGIO),
a ->parent hop dropped."""

from __future__ import annotations

import difflib
import hashlib
import random
import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

RULES = Path(__file__).parent / "smpl" / "operators.cocci"

# The path from a ring-buffer write to a delivered signal or a woken poller, file by file.
PATH: dict[str, tuple[str, ...]] = {
    "kernel/events/ring_buffer.c": ("perf_output_wakeup", "perf_output_put_handle", "__perf_output_begin",
                                    "ring_buffer_init", "perf_output_end"),
    "kernel/events/core.c": ("perf_event_wakeup", "ring_buffer_wakeup", "perf_poll", "perf_fasync",
                             "__perf_event_overflow", "perf_output_sample", "_perf_event_refresh",
                             "perf_event_set_output", "perf_mmap", "perf_pending_irq",
                             # at exit: the exited event's waiters, and what perf_poll() tells them
                             "perf_event_exit_event", "is_event_hup",
                             # attr.sigtrap: the overflow's task_work and its SIGTRAP
                             "perf_pending_task", "perf_sigtrap", "perf_event_remove_on_exec", "inherit_task_group"),
    "kernel/signal.c": ("send_sig_perf",),
    "include/linux/perf_event.h": ("perf_event_fasync",),
    # F_SETSIG's body is f_owner_sig() in 6.12 (do_fcntl() only dispatches; its other commands are off the path).
    "fs/fcntl.c": ("__f_setown", "f_setown", "f_setown_ex", "f_owner_sig", "send_sigio", "send_sigio_to_task", "sigio_perm",
                   "kill_fasync", "kill_fasync_rcu"),
}
# Where the path is one part of a function, the lines it takes there: the first and the last, by their text.
FOCUS: dict[str, tuple[str, str]] = {
    "perf_output_sample": ("if (!event->attr.watermark) {", "local_inc(&rb->wakeup);"),  # wakeup_events
    "perf_mmap": ("user_extra = nr_pages + 1;", "atomic64_add(extra, &vma->vm_mm->pinned_vm);"),  # accounting
}
OPERATORS = ("relational", "condition", "logical", "statement", "bound", "sibling", "redirection")

# What each relational operator becomes: its negation, then its boundary neighbour.
RELATIONAL = {"==": ("!=",), "!=": ("==",), "<": (">=", "<="), "<=": (">", "<"), ">": ("<=", ">="),
              ">=": ("<", ">")}
# Families of constants; a constant is swapped with its neighbours in its family.
FAMILIES = (("POLL_HUP", "POLL_IN", "POLL_OUT", "POLL_MSG", "POLL_ERR", "POLL_PRI"),  # perf's two first
            ("POLLHUP", "POLLIN", "POLLRDNORM", "POLLOUT", "POLLERR", "POLLPRI"),
            ("EPOLLHUP", "EPOLLIN", "EPOLLRDNORM", "EPOLLOUT", "EPOLLERR"),
            ("PIDTYPE_PID", "PIDTYPE_TGID", "PIDTYPE_PGID", "PIDTYPE_SID"),
            ("F_OWNER_TID", "F_OWNER_PID", "F_OWNER_PGRP"),
            ("SIGIO", "SIGURG"))


SYMBOLS = (("==", "eq"), ("!=", "ne"), ("<=", "le"), (">=", "ge"), ("->", "of"), ("&&", "and"), ("||", "or"),
           ("<", "lt"), (">", "gt"), ("!", "not"))


class MutagenError(RuntimeError):
    """spatch is missing or failed on a file; the message says which."""


@dataclass(frozen=True)
class Site:
    operator: str
    function: str
    start: tuple[int, int]  # (line 1-based, column 0-based)
    end: tuple[int, int]  # exclusive
    extra: tuple[str, ...] = ()  # the operator's own words: the relational operator, the constant, a second span


@dataclass(frozen=True)
class Mutant:
    path: str  # the file, relative to the tree
    function: str
    operator: str
    line: int
    before: str  # the span as written
    after: str  # what the mutant writes instead
    diff: str  # a unified diff against the tree, as `git apply` takes it

    @property
    def name(self) -> str:
        """Stable and readable: file, function, operator, line, the change in a few words, and a digest of the
        diff (two changes may read alike once their symbols are words)."""
        words = f"{self.before} to {self.after}"
        for symbol, word in SYMBOLS:
            words = words.replace(symbol, f" {word} ")
        change = re.sub(r"[^A-Za-z0-9]+", "_", words)[:40].strip("_")
        digest = hashlib.sha256(self.diff.encode()).hexdigest()[:6]
        return f"{Path(self.path).stem}-{self.function}-{self.operator}-{self.line}-{change}-{digest}"


def sites(source: Path) -> list[Site]:
    """Every operator site Coccinelle finds in one file."""
    try:
        done = subprocess.run(["spatch", "--very-quiet", "--no-includes", "--sp-file", str(RULES), str(source)],
                              capture_output=True, text=True, timeout=900)
    except FileNotFoundError as e:
        raise MutagenError("spatch is missing: install Debian's coccinelle (./sigwake setup does)") from e
    if done.returncode != 0:
        raise MutagenError(f"spatch on {source}: {done.stderr.strip()[-2000:]}")
    found = []
    for line in done.stdout.splitlines():
        words = line.split()
        if len(words) < 7 or words[0] != "SITE":
            continue
        operator, function, numbers = words[1], words[2], words[3:]
        spans = [int(n) for n in numbers if n.isdigit()]
        rest = tuple(n for n in numbers[4:] if not n.isdigit())
        if operator == "logical":
            found.append(Site(operator, function, (spans[0], spans[1]), (spans[6], spans[7]),
                              tuple(map(str, spans[2:6]))))
        else:
            found.append(Site(operator, function, (spans[0], spans[1]), (spans[2], spans[3]), rest))
    return found


def _offset(lines: list[str], where: tuple[int, int]) -> int:
    return sum(len(line) for line in lines[:where[0] - 1]) + where[1]


def changes(site: Site, text: str, lines: list[str]) -> Iterable[tuple[int, int, str]]:
    """(start offset, end offset, replacement) for each mutant of a site."""
    start, end = _offset(lines, site.start), _offset(lines, site.end)
    span = text[start:end]
    if site.operator == "relational":
        op = site.extra[0] if site.extra else span.strip()
        at = start + span.index(op)
        for other in RELATIONAL.get(op, ()):
            yield at, at + len(op), other
    elif site.operator == "condition":
        yield start, end, f"!({span})"
        yield start, end, "1"
    elif site.operator == "logical":
        left_end = _offset(lines, (int(site.extra[0]), int(site.extra[1])))
        right_start = _offset(lines, (int(site.extra[2]), int(site.extra[3])))
        yield start, end, text[start:left_end]
        yield start, end, text[right_start:end]
    elif site.operator == "statement":
        yield start, end, "(void)0"
    elif site.operator == "bound":
        value = int(span)
        yield start, end, str(value + 1)
        if value > 0:
            yield start, end, str(value - 1)
    elif site.operator == "sibling":
        family = next((f for f in FAMILIES if span in f), ())
        if span in family:
            i = family.index(span)
            for j in (i - 1, i + 1):  # its neighbours in the family
                if 0 <= j < len(family):
                    yield start, end, family[j]
    elif site.operator == "redirection":
        hop = re.match(r"\s*->\s*parent\b", text[end:])
        if hop is not None:
            yield start, end + hop.end(), span


def focused_lines(lines: list[str], path: str, function: str, first: str, last: str) -> range:
    """The 1-based lines from the first one holding `first` to the next one holding `last`."""
    start = next((i for i, line in enumerate(lines, 1) if first in line), None)
    end = next((i for i, line in enumerate(lines[start - 1:], start) if last in line), None) if start else None
    if start is None or end is None:
        raise MutagenError(f"{path}: {function}()'s part on the path ({first!r} to {last!r}) is not in this tree")
    return range(start, end + 1)


def mutants_of(tree: Path, path: str, functions: tuple[str, ...], operators: tuple[str, ...] = OPERATORS,
               focus: dict[str, tuple[str, str]] | None = None) -> list[Mutant]:
    """Every mutant of one file's path functions (of a function in `focus`, only its part there), in file order,
    each once."""
    source = tree / path
    text = source.read_text()
    lines = text.splitlines(keepends=True)
    focus = FOCUS if focus is None else focus
    parts = {f: focused_lines(lines, path, f, *focus[f]) for f in functions if f in focus}
    made: dict[str, Mutant] = {}
    for site in sorted(sites(source), key=lambda s: (s.start, s.operator)):
        if site.function not in functions or site.operator not in operators:
            continue
        if site.function in parts and not (site.start[0] in parts[site.function]
                                           and site.end[0] in parts[site.function]):
            continue
        for start, end, after in changes(site, text, lines):
            mutated = text[:start] + after + text[end:]
            if mutated == text:
                continue
            diff = "".join(difflib.unified_diff(lines, mutated.splitlines(keepends=True), f"a/{path}", f"b/{path}",
                                                n=3))
            mutant = Mutant(path, site.function, site.operator, site.start[0], text[start:end], after, diff)
            made.setdefault(diff, mutant)
    return list(made.values())


def generate(tree: Path, out: Path, path: dict[str, tuple[str, ...]] | None = None,
             operators: tuple[str, ...] = OPERATORS) -> list[tuple[Mutant, Path]]:
    """Every mutant of the path in `tree`, each written to out/<name>.patch."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for file, functions in (path or PATH).items():
        for mutant in mutants_of(tree, file, functions, operators):
            patch = out / f"{mutant.name}.patch"
            patch.write_text(mutant.diff)
            written.append((mutant, patch))
    return written


def sample(mutants: list[tuple[Mutant, Path]], per_group: int) -> list[tuple[Mutant, Path]]:
    """At most `per_group` mutants per function and operator, spread over the function (first, last, between):
    the same choice for the same tree every time."""
    groups: dict[tuple[str, str], list[tuple[Mutant, Path]]] = {}
    for item in mutants:
        groups.setdefault((item[0].function, item[0].operator), []).append(item)
    chosen = []
    for items in groups.values():
        if len(items) <= per_group:
            chosen += items
        else:
            step = (len(items) - 1) / max(per_group - 1, 1)
            chosen += [items[round(i * step)] for i in range(per_group)]
    return [m for m in mutants if m in chosen]


def stratified(mutants: list[tuple[Mutant, Path]], size: int, seed: int) -> list[tuple[Mutant, Path]]:
    """A random sample of `size` mutants, stratified by function with proportional allocation: each function's
    share of `size` is its share of the population (largest remainders; no floor, so the sample stays
    self-weighting and its plain proportion estimates the population's), drawn within the function by
    random.Random(seed); in file order. The whole population when `size` covers it."""
    if size >= len(mutants):
        return list(mutants)
    strata: dict[str, list[tuple[Mutant, Path]]] = {}
    for item in mutants:
        strata.setdefault(item[0].function, []).append(item)
    exact = {f: size * len(items) / len(mutants) for f, items in strata.items()}
    quota = {f: int(share) for f, share in exact.items()}
    for f in sorted(strata, key=lambda f: (quota[f] - exact[f], f)):  # the largest remainders first
        if sum(quota.values()) >= size:
            break
        quota[f] += 1
    rng = random.Random(seed)
    chosen = {m.name for f in sorted(strata) for m, _ in rng.sample(strata[f], min(quota[f], len(strata[f])))}
    return [item for item in mutants if item[0].name in chosen]


def further(mutants: list[tuple[Mutant, Path]], chosen: list[tuple[Mutant, Path]],
            function: str) -> tuple[Mutant, Path] | None:
    """The next of `function`'s mutants not chosen yet: one per operator in turn (the operator with the fewest
    chosen first, OPERATORS' order between equals), each operator's in file order; None when all are chosen."""
    taken = {m.name for m, _ in chosen}
    left = [item for item in mutants if item[0].function == function and item[0].name not in taken]
    if not left:
        return None
    per_operator = {op: sum(m.function == function and m.operator == op for m, _ in chosen) for op in OPERATORS}
    return min(left, key=lambda item: (per_operator.get(item[0].operator, 0), OPERATORS.index(item[0].operator)
                                       if item[0].operator in OPERATORS else len(OPERATORS)))
