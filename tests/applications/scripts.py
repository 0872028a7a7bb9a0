"""Load a reproduction script of applications/ as a module (they are scripts, not a package)."""

import importlib.util
import pathlib

APPLICATIONS = pathlib.Path(__file__).resolve().parents[2] / "applications"


def load_application(name):
    """`applications/<name>.py` as a fresh module, e.g. `load_application("resnet_cifar")`."""
    spec = importlib.util.spec_from_file_location(f"_app_{name}", APPLICATIONS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
