"""Fixtures of the pytest suite (run through ctest, one pytest process for the
whole suite: python/CMakeLists.txt sets PYTHONPATH to the build tree's
package, DSA_CLI and DSA_SOURCE_DIR). The torch tests skip where torch is not
installed (CI does not install it: docs/python.md, "Tests")."""

import glob
import os
import subprocess

import pytest

pytest_plugins = ["pytester"]  # a user's pytest run inside this one (test_user_pytest.py)

TORCH_MISSING = ("torch is not installed: Debian's python3-torch (DSA_WITH_TORCH=1 scripts/install-deps.sh) "
                 "runs the torch tests")

SOURCE_DIR = os.environ.get("DSA_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("DSA_CLI") or os.path.join(SOURCE_DIR, "build", "dsa-oracle")
GOLDEN = os.path.join(SOURCE_DIR, "data", "golden")


def golden_sets():
    return sorted(os.path.dirname(m) for m in glob.glob(os.path.join(GOLDEN, "*", "*", "manifest.json")))


def golden_files():
    import dsa_oracle

    return [path for d in golden_sets() for path in dsa_oracle.golden.cases(d)]


def case_id(path):
    return os.path.relpath(path, GOLDEN)


def run_cli(*args, check=True):
    result = subprocess.run([CLI, *args], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise AssertionError(f"dsa-oracle {' '.join(args)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


@pytest.fixture(scope="session")
def cli():
    if not os.access(CLI, os.X_OK):
        pytest.fail(f"no dsa-oracle program at {CLI} (set DSA_CLI)")
    return CLI


@pytest.fixture(scope="session")
def torch():
    return pytest.importorskip("torch", reason=TORCH_MISSING)
