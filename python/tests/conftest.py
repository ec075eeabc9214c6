"""Shared fixtures: where the golden vectors are (as the Rust tests find them)."""

import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def _repo_vectors() -> pathlib.Path:
    """The folder the Rust tests use: PROLLY_VECTORS, else the repository's archive unpacked
    by `cargo run -p prollystore-test-vectors` (which prints the folder)."""
    env = os.environ.get("PROLLY_VECTORS")
    if env:
        return pathlib.Path(env)
    out = subprocess.run(
        ["cargo", "run", "-q", "-p", "prollystore-test-vectors"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    )
    return pathlib.Path(out.stdout.strip().splitlines()[-1])


def vector_sets():
    """Every vectors folder to check: the repository's copy, and the newest set beside the
    repository (../shared/vectors) when present."""
    sets = [_repo_vectors()]
    shared = pathlib.Path(os.environ.get("PROLLY_SHARED_VECTORS", REPO.parent / "shared" / "vectors"))
    if shared.is_dir() and shared.resolve() != sets[0].resolve():
        sets.append(shared)
    return sets


VECTOR_SETS = vector_sets()


def dolt_databases():
    """(vectors folder, database dir, expected dir) for every Dolt database in the vectors."""
    out = []
    for vs in VECTOR_SETS:
        root = vs / "dolt-db"
        for db in sorted(root.iterdir()) if root.is_dir() else []:
            if (db / ".dolt").is_dir():
                out.append((vs, db, root / f"{db.name}.expected"))
    # No database found would leave the parametrized tests with nothing to check.
    assert out, f"no Dolt databases under {[str(v / 'dolt-db') for v in VECTOR_SETS]}"
    return out


@pytest.fixture(scope="session")
def vecdb() -> pathlib.Path:
    """The `vecdb` database of the repository's vectors."""
    return VECTOR_SETS[0] / "dolt-db" / "vecdb"
