"""The kernel reports real kernels print, read as syzbot reads them: each golden console under
harness/tests/data/kernel-reports/ (bench/golden_reports.py: lkdtm and sigwake's lock provokers on Debian's
6.1, 6.12 and 7.2 sources for amd64 and arm64) holds the reports one provocation made, and the
reader must find each once and title it as expected.json says, which was written from syzkaller's rules
(docs/kernel-reports.md), not from what the reader said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sigwake.parse import splats

DATA = Path(__file__).parent / "data" / "kernel-reports"
EXPECTED: dict[str, list[str]] = json.loads((DATA / "expected.json").read_text())["titles"]


def test_every_golden_console_has_its_titles_and_every_title_its_console() -> None:
    assert {str(p.relative_to(DATA)) for p in DATA.glob("*/*.log")} == set(EXPECTED)


@pytest.mark.parametrize("log", sorted(EXPECTED))
def test_each_report_a_real_kernel_printed_is_found_once_and_titled_as_syzbot_titles_it(log: str) -> None:
    assert [s.title for s in splats.find((DATA / log).read_text(errors="replace"))] == EXPECTED[log]
