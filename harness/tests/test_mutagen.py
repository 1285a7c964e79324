"""The generated mutants' operators, checked with Coccinelle itself on a small C file (data/mutagen/path.c):
each operator's sites inside the path's functions only, the change each mutant makes, and that every mutant is
a one-span change that still compiles."""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from sigwake.commands.mutagen import Mutant, MutagenError, further, generate, mutants_of, sample, stratified

DATA = Path(__file__).parent / "data" / "mutagen"
FUNCTIONS = ("perf_output_wakeup", "send_sigio")

pytestmark = pytest.mark.skipif(shutil.which("spatch") is None, reason="spatch is missing: ./sigwake setup installs "
                                                                         "Debian's coccinelle for the tests")


def changes() -> set[tuple[str, str, str, str]]:
    return {(m.function, m.operator, m.before, m.after) for m in mutants_of(DATA, "path.c", FUNCTIONS)}


def test_each_operator_makes_its_changes_on_the_path_only() -> None:
    made = changes()
    expected = {
        ("perf_output_wakeup", "relational", ">=", "<"), ("perf_output_wakeup", "relational", ">=", ">"),
        ("perf_output_wakeup", "relational", "!=", "=="), ("send_sigio", "relational", "==", "!="),
        ("send_sigio", "relational", ">", "<="), ("send_sigio", "relational", ">", ">="),
        ("perf_output_wakeup", "condition", "head >= watermark && event->limit != 0",
         "!(head >= watermark && event->limit != 0)"),
        ("perf_output_wakeup", "condition", "head >= watermark && event->limit != 0", "1"),
        ("perf_output_wakeup", "logical", "head >= watermark && event->limit != 0", "head >= watermark"),
        ("perf_output_wakeup", "logical", "head >= watermark && event->limit != 0", "event->limit != 0"),
        ("perf_output_wakeup", "statement", "event->pending_kill = POLL_IN", "(void)0"),
        ("perf_output_wakeup", "statement", "irq_work_queue(event->parent)", "(void)0"),
        ("send_sigio", "statement", "kill_fasync(event, POLL_HUP)", "(void)0"),
        ("perf_output_wakeup", "bound", "0", "1"), ("send_sigio", "bound", "2", "3"), ("send_sigio", "bound", "2", "1"),
        ("perf_output_wakeup", "sibling", "POLL_IN", "POLL_HUP"), ("perf_output_wakeup", "sibling", "POLL_IN", "POLL_OUT"),
        ("send_sigio", "sibling", "POLL_HUP", "POLL_IN"), ("send_sigio", "sibling", "PIDTYPE_TGID", "PIDTYPE_PID"),
        ("perf_output_wakeup", "redirection", "event->parent", "event"),
    }
    assert expected <= made, sorted(expected - made)
    assert not {m for m in made if m[0] not in FUNCTIONS}  # elsewhere() is off the path
    assert {m[1] for m in made} == {"relational", "condition", "logical", "statement", "bound", "sibling",
                                    "redirection"}


def test_every_mutant_is_one_change_that_applies_and_compiles(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copy(DATA / "path.c", tree)
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    written = generate(tree, tmp_path / "patches", {"path.c": FUNCTIONS})
    assert len(written) == len({m.name for m, _ in written}) >= 20  # names are unique
    for mutant, patch in written:
        assert patch.read_text().count("\n@@ ") + patch.read_text().startswith("@@") <= 1
        subprocess.run(["git", "apply", "--check", str(patch)], cwd=tree, check=True)
        subprocess.run(["git", "apply", str(patch)], cwd=tree, check=True)
        compiled = subprocess.run(["gcc", "-fsyntax-only", "-Wno-unused", "path.c"], cwd=tree, capture_output=True,
                                  text=True)
        subprocess.run(["git", "apply", "-R", str(patch)], cwd=tree, check=True)
        assert compiled.returncode == 0, (mutant.name, compiled.stderr)


def test_a_sample_spreads_over_each_function_and_operator_and_is_stable() -> None:
    made = [(m, Path(m.name)) for m in mutants_of(DATA, "path.c", FUNCTIONS)]
    one = sample(made, 1)
    assert Counter((m.function, m.operator) for m, _ in one) == Counter(
        {(m.function, m.operator): 1 for m, _ in made})
    assert sample(made, 1) == one and sample(made, 100) == made


def test_a_focused_function_is_mutated_only_in_its_part_on_the_path() -> None:
    focus = {"send_sigio": ("kill_fasync(event, POLL_HUP)", "kill_fasync(event, POLL_HUP)")}
    focused = mutants_of(DATA, "path.c", FUNCTIONS, focus=focus)
    whole = mutants_of(DATA, "path.c", FUNCTIONS, focus={})
    assert {m.line for m in focused if m.function == "send_sigio"} == {30}
    assert {m.line for m in whole if m.function == "send_sigio"} == {29, 30}
    assert [m for m in focused if m.function != "send_sigio"] == [m for m in whole if m.function != "send_sigio"]
    with pytest.raises(MutagenError, match="send_sigio"):
        mutants_of(DATA, "path.c", FUNCTIONS, focus={"send_sigio": ("no such line", "kill_fasync")})


def test_further_takes_each_function_s_next_mutant_from_the_least_chosen_operator_until_none_is_left() -> None:
    made = [(m, Path(m.name)) for m in mutants_of(DATA, "path.c", FUNCTIONS)]
    chosen = sample(made, 1)
    of_send_sigio = [item for item in made if item[0].function == "send_sigio"]
    picked = []
    while (item := further(made, chosen + picked, "send_sigio")) is not None:
        assert item[0].function == "send_sigio" and item not in chosen + picked
        counts = Counter(m.operator for m, _ in chosen + picked if m.function == "send_sigio")
        assert counts[item[0].operator] == min(counts[m.operator] for m, _ in of_send_sigio if (m, _) not in
                                               chosen + picked)
        picked.append(item)
    assert sorted(m.name for m, _ in chosen + picked if m.function == "send_sigio") == sorted(
        m.name for m, _ in of_send_sigio)


def fake_population(sizes: dict[str, int]) -> list[tuple[Mutant, Path]]:
    return [(Mutant(f"kernel/events/{f}.c", f, "statement", i, "x", "", f"diff {f} {i}"), Path(f"{f}-{i}.patch"))
            for f, n in sizes.items() for i in range(n)]


def test_a_stratified_sample_gives_each_function_its_proportional_share_and_is_the_same_for_a_seed() -> None:
    population = fake_population({"perf_poll": 60, "send_sigio": 30, "sigio_perm": 9, "perf_fasync": 1})
    chosen = stratified(population, 20, seed=7)
    per_function = Counter(m.function for m, _ in chosen)
    assert len(chosen) == 20 and per_function == {"perf_poll": 12, "send_sigio": 6, "sigio_perm": 2}  # no floor: 0.2 is 0
    assert chosen == stratified(population, 20, seed=7) and chosen != stratified(population, 20, seed=8)
    assert chosen == [item for item in population if item in chosen]  # in file order
    assert stratified(population, 1000, seed=7) == population  # the whole population when the size covers it


def test_the_seed_draws_within_a_function_uniformly() -> None:
    population = fake_population({"perf_poll": 10})
    seen = Counter(m.line for seed in range(2000) for m, _ in stratified(population, 1, seed))
    assert set(seen) == set(range(10)) and max(seen.values()) < 2 * min(seen.values())
