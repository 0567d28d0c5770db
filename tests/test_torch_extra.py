"""torch is an extra of the wheel: mhalib needs only numpy, and the two modules that need torch
say which extra to install when it is missing."""
from __future__ import annotations

import subprocess
import sys

import pytest

from helpers import ROOT

# Runs with torch made unimportable (a None entry in sys.modules makes `import torch` fail).
WITHOUT_TORCH = "import sys; sys.modules['torch'] = None\n"


@pytest.mark.parametrize("module", ["mhalib.models.tiny", "mhalib.torch_ref"])
def test_a_torch_module_without_torch_names_the_extra(module):
    code = WITHOUT_TORCH + f"import {module}"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 1
    assert f"ImportError: {module} needs torch" in run.stderr and "pip install 'mhalib[torch]'" in run.stderr, run.stderr


def test_mhalib_and_its_numpy_models_import_without_torch():
    code = WITHOUT_TORCH + ("import mhalib, mhalib.models.tiny_numpy, mhalib.models.bert, mhalib.models.head_analysis\n"
                            "print(mhalib.softmax([0.0, 0.0]).tolist())")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[0.5, 0.5]"


def test_the_wheel_declares_the_extra():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["torch"] == ["torch==2.13.0"]
