"""Where a kernel came from, as KCIDB's checkouts and builds say it and KernelCI's dashboard lists them (by
origin, tree_name, git_repository_url and git_repository_branch, newest start_time first; a checkout without a
start_time cannot be listed at all).

- A Debian package: Debian's kernel repository on salsa, the branch its suite is kept on (DEP-14 as the kernel
  team names them: debian/latest for sid, debian/<major.minor>/<suite> for a release) and the upload's tag
  (debian/<version>). The tag's commit hash is not known here (no network to salsa), so git_commit_hash is left
  out and misc says so, as it says the branch is inferred from the suite. Every flavour is one checkout.
- A package file (--kernel FILE.deb): its version says nothing of where its source is: no git fields.
- A tree sigwake built: its remote (an https URL; any other stays in misc), branch, commit, `git describe`
  and the patchset applied (KCIDB's hash; "" for none); a tree with other changes uncommitted is no commit:
  no git_commit_hash (misc.base_commit), and a checkout of its own.
- An image file, the host's running kernel: no source known.
start_time is when sigwake took the source: a tree when its build read it, any other when sigwake began running
a kernel of it (the earliest); when the kernel was built (uname -v: Debian's says a day) is misc.built.

The build: Debian built a package (PASS), sigwake a tree (PASS, its start), someone an image file (PASS: it
exists); the host's running kernel was built by no one sigwake knows of: no status, and it says so."""

from __future__ import annotations

import datetime
import re
from typing import Any

from ..core.model import LOCAL, KernelResult

SALSA = "https://salsa.debian.org/kernel-team/linux.git"
KCIDB_ARCH = {"amd64": "x86_64", "arm64": "arm64"}  # Debian's architecture names, as the kernel's
UNSTABLE = ("sid", "unstable")


def token(text: str) -> str:
    """A piece of an id or a path: letters, digits, '_' and '-' only."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", text)


def built_at(version: str) -> str | None:
    """When a kernel was built, from its `uname -v`, where that says the time (a kernel built here: "Mon Nov 30
    16:40:00 UTC 2026"); None for Debian's, which says only its changelog's day (changelog_day)."""
    if (stamp := re.search(r"\w{3} \w{3} +\d+ \d\d:\d\d:\d\d UTC \d{4}\s*$", version)) is not None:
        when = datetime.datetime.strptime(" ".join(stamp[0].split()), "%a %b %d %H:%M:%S UTC %Y")
        return when.replace(tzinfo=datetime.timezone.utc).isoformat()
    return None


def changelog_day(version: str) -> str | None:
    """The day of a Debian kernel's changelog entry, which its `uname -v` ends in: "(2026-10-12)"."""
    day = re.search(r"\((\d{4}-\d{2}-\d{2})\)\s*$", version)
    return f"{day[1]}T00:00:00+00:00" if day else None


def debian_tag(version: str) -> str:
    """The upload's tag in Debian's repository (DEP-14: ':' as '%', '~' as '_')."""
    return "debian/" + version.replace(":", "%").replace("~", "_")


def debian_branch(version: str, suite: str) -> str:
    """The branch a suite's uploads are made from: debian/latest for sid, else debian/<major.minor>/<suite>."""
    if suite in UNSTABLE:
        return "debian/latest"
    upstream = re.match(r"(?:\d+:)?(\d+)\.(\d+)", version)
    return f"debian/{upstream[1]}.{upstream[2]}/{suite}" if upstream else f"debian/{suite}"


def checkout(kernel: KernelResult, origin: str) -> dict[str, Any]:
    """The checkout a kernel's source is (see the module's words); the same id for every kernel of one source.
    Its start_time is when sigwake took the source: a tree when its build read it, anything else when sigwake
    began running its kernel (render_kcidb keeps the earliest of one checkout's kernels)."""
    o = kernel.origin
    fields: dict[str, Any] = {}
    misc: dict[str, Any] = {"built": built_at(kernel.kernel_version) or changelog_day(kernel.kernel_version)}
    if o.kind == "debian" and o.suite == LOCAL:  # a package file: its own bytes, whatever version it names
        key, tree, comment = f"deb:{o.sha256}", "local-package", f"a local package file {o.package} {o.version}, {o.path}"
        misc |= {"source_version": o.version, "path": o.path, "git": "not known: a package file names no source"}
    elif o.kind == "debian" and o.version:  # every flavour of one source version is one checkout
        key, tree, comment = f"debian:linux={o.version}", "debian", f"Debian's linux {o.version} ({o.suite})"
        tag = debian_tag(o.version)
        fields = {"git_repository_url": SALSA, "git_repository_branch": debian_branch(o.version, o.suite or ""),
                  "git_commit_name": tag, "git_commit_tags": [tag]}
        misc |= {"source_version": o.version, "suite": o.suite,
                 "git_repository_branch": f"inferred from the suite it was fetched from ({o.suite})",
                 "git_commit_hash": f"not known here (no network to salsa): the commit Debian's tag {tag} names"}
    elif o.git_commit:
        # the commit and its patchset; with other changes uncommitted, the source is no commit: the image's own
        clean = o.patchset_hash is not None
        key = f"git:{o.git_commit}" + (f"+{o.patchset_hash}" if o.patchset_hash else "" if clean else f"+image:{o.sha256}")
        tree = token(re.sub(r"\.git$", "", (o.git_url or o.git_tree or "source").rstrip("/").rsplit("/", 1)[-1]))
        comment = (f"a kernel tree at {o.git_name or o.git_commit[:12]}" + (" with patches" if o.patchset_hash else "")
                   + ("" if clean else ", with uncommitted changes"))
        if clean and re.fullmatch(r"[0-9a-f]{40}", o.git_commit):
            fields["git_commit_hash"] = o.git_commit
            fields["patchset_hash"] = o.patchset_hash
        else:
            misc["base_commit"] = o.git_commit
            if not clean:
                misc["patchset"] = "not known: the tree had uncommitted changes, or its build predates sigwake saying"
        if o.git_url and o.git_url.startswith("https://"):
            fields["git_repository_url"] = o.git_url
        elif o.git_url:
            misc["remote"] = o.git_url  # KCIDB takes https URLs only
        if o.git_branch:
            fields["git_repository_branch"] = o.git_branch
        if o.git_name:
            fields["git_commit_name"] = o.git_name
        misc["tree"] = o.git_tree
    elif o.kind == "host":
        key, tree, comment = f"host:{kernel.release}", "host", f"the host's running kernel {kernel.release}"
    else:
        key, tree, comment = f"image:{o.sha256}", "image", f"an image file, {o.path}"
        misc["path"] = o.path
    start = o.built_at if o.git_commit and o.built_at else kernel.started()
    found: dict[str, Any] = {"id": f"{origin}:{token(key)}", "origin": origin, "tree_name": tree, **fields,
                             "comment": comment, "start_time": start, "valid": True}
    if misc := {k: v for k, v in misc.items() if v is not None}:
        found["misc"] = misc
    return found


def build(kernel: KernelResult, origin: str, checkout_id: str, console_log: str,
          links: dict[str, str]) -> dict[str, Any]:
    o = kernel.origin
    key = token(kernel.kernel_id) + (f"_{o.sha256[:16]}" if o.sha256 else "")  # one image may be two kernels' files
    found: dict[str, Any] = {
        "id": f"{origin}:{key}", "origin": origin, "checkout_id": checkout_id,
        "architecture": KCIDB_ARCH.get(o.arch or "amd64", "x86_64"),
        "comment": f"{kernel.kernel_id}: release {kernel.release or 'unknown'}",
        "misc": {"kernel_id": kernel.kernel_id, "release": kernel.release or "", "boot": kernel.boot.status,
                 "console_log": console_log, **({"console_log_url": links["log_url"]} if links else {})}}
    if o.kind == "host":  # nothing built it that sigwake knows of: no status rather than a PASS nobody saw
        found["comment"] = f"not built by sigwake: the running kernel of the host that ran the cases, {kernel.release}"
        found["misc"]["built_by"] = "not known: the host's own kernel"
    else:  # a package Debian built, a tree sigwake built, an image someone built: it exists
        found["status"] = "PASS"
    if config := o.config or (f"debian {o.arch} {o.flavour}" if o.flavour else None):
        found["config_name"] = config
    if start := o.built_at or built_at(kernel.kernel_version):
        found["start_time"] = start
    for name, value in (("flavour", o.flavour), ("lava_job_url", o.lava_job_url), ("uname_v", kernel.kernel_version)):
        if value:
            found["misc"][name] = value
    return found
