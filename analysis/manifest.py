"""SHA-256 manifest of the benchmark CSVs: compute, write and verify.

What: hashes every CSV under <results>/bench, checks them against the
`csv_sha256` block of <results>/manifest.json (written by the sweep, with
git_sha, server versions, OS, kernel, compiler, cflags, CPU model and
measurement windows), and reports mismatched, missing and unlisted files.

Why: every figure and table must be traceable to the exact bytes it was
made from (paper Section 5.2, Appendix B.5).  reproduce.py verifies the
manifest before analysing and warns (but continues) on any discrepancy.

CLI:  python analysis/manifest.py --verify results
      python analysis/manifest.py --write results   # (re)compute csv_sha256
Paths in csv_sha256 are relative to the repository root (the parent of
results/); paths relative to the manifest's directory or absolute paths are
accepted too.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

MANIFEST_NAME = "manifest.json"


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def csv_files(results: Path) -> list[Path]:
    return sorted((results / "bench").glob("*.csv"))


def rel_key(path: Path, results: Path) -> str:
    """Repo-root-relative POSIX path used as the csv_sha256 key."""
    results = results.resolve()
    return (results.name + "/" + path.resolve().relative_to(results).as_posix())


def compute(results: Path) -> dict[str, str]:
    """{repo-relative path: sha256 hex} for every results/bench/*.csv."""
    return {rel_key(p, results): sha256_file(p) for p in csv_files(results)}


@dataclass
class Verification:
    """Outcome of checking a manifest against the files on disk."""

    present: bool
    ok: list = field(default_factory=list)          # keys whose hash matches
    mismatched: list = field(default_factory=list)  # (key, expected, actual)
    missing: list = field(default_factory=list)     # listed but not on disk
    unlisted: list = field(default_factory=list)    # on disk, not listed
    error: str = ""

    @property
    def passed(self) -> bool:
        return (self.present and not self.error and not self.mismatched
                and not self.missing and not self.unlisted)

    def messages(self) -> list[str]:
        if not self.present:
            return ["no manifest.json: CSV hashes not verified"]
        if self.error:
            return [f"manifest.json unusable: {self.error}"]
        out = [f"hash mismatch: {k} (manifest {e[:12]}..., file {a[:12]}...)"
               for k, e, a in self.mismatched]
        out += [f"listed in manifest but missing: {k}" for k in self.missing]
        out += [f"CSV not listed in manifest: {k}" for k in self.unlisted]
        return out


def _resolve(key: str, manifest_dir: Path) -> Path | None:
    p = Path(key)
    cands = [p] if p.is_absolute() else [manifest_dir.parent / p, manifest_dir / p]
    for c in cands:
        if c.is_file():
            return c
    return None


def load(results: Path) -> dict | None:
    path = results / MANIFEST_NAME
    if not path.is_file():
        return None
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def verify(results: Path) -> Verification:
    """Check <results>/manifest.json csv_sha256 against the files on disk."""
    try:
        man = load(results)
    except (OSError, ValueError) as e:
        return Verification(present=True, error=str(e))
    if man is None:
        return Verification(present=False)
    hashes = man.get("csv_sha256")
    if not isinstance(hashes, dict):
        return Verification(present=True, error="no csv_sha256 object")
    v = Verification(present=True)
    seen: set[Path] = set()
    for key in sorted(hashes):
        f = _resolve(key, results)
        if f is None:
            v.missing.append(key)
            continue
        seen.add(f.resolve())
        actual = sha256_file(f)
        if actual.lower() == str(hashes[key]).lower():
            v.ok.append(key)
        else:
            v.mismatched.append((key, str(hashes[key]), actual))
    for p in csv_files(results):
        if p.resolve() not in seen:
            v.unlisted.append(rel_key(p, results))
    return v


def write(results: Path) -> Path:
    """Update (or create) manifest.json's csv_sha256 block, keeping the rest."""
    path = results / MANIFEST_NAME
    man = load(results) or {}
    man["csv_sha256"] = compute(results)
    path.write_text(json.dumps(man, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--verify", metavar="RESULTS", type=Path)
    g.add_argument("--write", metavar="RESULTS", type=Path)
    a = ap.parse_args(argv)
    if a.write:
        print(write(a.write))
        return 0
    v = verify(a.verify)
    for m in v.messages():
        print(m, file=sys.stderr)
    print(f"manifest: {len(v.ok)} ok, {len(v.mismatched)} mismatched, "
          f"{len(v.missing)} missing, {len(v.unlisted)} unlisted")
    return 0 if v.passed else 1


if __name__ == "__main__":
    sys.exit(main())
