"""A distro's own archive (--apt-source): a real, signed apt repository built here
from a Debian kernel package (dpkg-scanpackages, a Release signed with a key
made for the test) and served over HTTP on 127.0.0.1, beside a package that is
no kernel and a repository that answers 404. The kernel is found there first,
booted and recorded with the repository as its origin; the others are named."""

from __future__ import annotations

import functools
import hashlib
import http.server
import subprocess
import threading
from collections.abc import Iterator
from email.utils import formatdate
from pathlib import Path

import pytest

from sigwake.commands.cli import REPO
from sigwake.kernels.debian import DebianError, apt_source
from sigwake.kernels.kernels import KernelCache, default_kernels
from sigwake.commands.orchestrator import RunConfig, run_kernels
from sigwake.core.progress import Progress
from sigwake.core.verdicts import Verdict

pytestmark = pytest.mark.slow


def not_a_kernel(pool: Path) -> None:
    root = pool.parent / "build-notakernel"
    (root / "DEBIAN").mkdir(parents=True)
    (root / "usr/share/doc/notakernel").mkdir(parents=True)
    (root / "usr/share/doc/notakernel/README").write_text("a package named like a kernel, holding none\n")
    (root / "DEBIAN/control").write_text("Package: linux-image-9.9.9-1-notakernel\nVersion: 1.0\nArchitecture: amd64\n"
                                         "Maintainer: sigwake tests <tests@sigwake.invalid>\n"
                                         "Description: not a kernel\n")
    subprocess.run(["dpkg-deb", "--build", "--root-owner-group", str(root), str(pool)], check=True,
                   capture_output=True, timeout=120)


def signed_repository(repo: Path, gnupg: Path) -> Path:
    """dists/qa/main/binary-amd64/Packages over pool/, and an InRelease signed by a new key; returns the key."""
    packages = repo / "dists/qa/main/binary-amd64/Packages"
    packages.parent.mkdir(parents=True)
    scanned = subprocess.run(["dpkg-scanpackages", "--multiversion", "pool"], cwd=repo, capture_output=True,
                             check=True, timeout=300)
    packages.write_bytes(scanned.stdout)
    digest = hashlib.sha256(scanned.stdout).hexdigest()
    (repo / "dists/qa/Release").write_text(
        f"Origin: sigwake-test\nSuite: qa\nCodename: qa\nDate: {formatdate(usegmt=True)}\nArchitectures: amd64\n"
        f"Components: main\nSHA256:\n {digest} {len(scanned.stdout)} main/binary-amd64/Packages\n")
    gnupg.mkdir(mode=0o700)
    gpg = ["gpg", "--homedir", str(gnupg), "--batch", "--pinentry-mode", "loopback", "--passphrase", ""]
    subprocess.run([*gpg, "--quick-gen-key", "sigwake test archive <tests@sigwake.invalid>", "ed25519", "sign",
                    "never"], check=True, capture_output=True, timeout=120)
    subprocess.run([*gpg, "--yes", "--clearsign", "--output", str(repo / "dists/qa/InRelease"),
                    str(repo / "dists/qa/Release")], check=True, capture_output=True, timeout=120)
    key = repo.parent / "archive-key.gpg"
    key.write_bytes(subprocess.run([*gpg, "--export"], check=True, capture_output=True, timeout=60).stdout)
    return key


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_distros_own_archive(served: str, cache_root: Path, tmp_path: Path) -> None:
    repo = tmp_path / "www" / "archive"
    pool = repo / "pool"
    pool.mkdir(parents=True)
    cache = KernelCache(cache_root)
    query = default_kernels("cloud")[0]  # bookworm's newest 6.1 cloud kernel: the smallest of the set
    package = cache.newest(query, Progress(quiet=True))
    cache.suite(package.suite).download(package, pool, Progress(quiet=True))
    not_a_kernel(pool)
    key = signed_repository(repo, tmp_path / "gnupg")
    own = f"deb [signed-by={key}] {served}/archive qa main"
    missing = f"deb [signed-by={key}] {served}/no-such-archive qa main"

    specs = (package.name, "linux-image-9.9.9-1-notakernel", "linux-image-0.0.0-1-nowhere")
    config = RunConfig(REPO, REPO / "build", cache_root, tmp_path / "results", specs,
                       apt_sources=(missing, own), repeat=1)
    summary = run_kernels(config, Progress(quiet=True))

    [result] = summary.results  # the kernel from the archive, booted and judged
    assert result.origin.suite == f"{served}/archive qa main" and result.origin.version == package.version
    assert result.boot.status == "ok", result.boot.detail
    assert next(c.verdict for c in result.reproducers if c.name == "watermark_sigio" and c.privilege == "root") \
        == Verdict.NOT_DELIVERED
    assert (tmp_path / "results" / f"{result.kernel_id}.json").exists()
    notakernel, nowhere = summary.failures
    assert notakernel.startswith("linux-image-9.9.9-1-notakernel: ") and "holds no kernel image" in notakernel
    assert nowhere.startswith("linux-image-0.0.0-1-nowhere: no package 'linux-image-0.0.0-1-nowhere' in ")
    assert f"unreadable: {served}/no-such-archive qa main: " in nowhere and "404" in nowhere


def test_a_source_line_that_is_none_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DebianError, match="expected a sources.list line"):
        apt_source("http://example.org/debian bookworm main", tmp_path)
    line = "deb [trusted=yes] file:///srv/repo ./"
    assert apt_source(line, tmp_path).lines == (line,) and apt_source(line, tmp_path).suite == "file:///srv/repo ./"
