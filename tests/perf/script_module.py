"""Loads a perf/ script as a module for its test: the path given as the test's first argument
(ctest passes the source tree's), else perf/NAME.py beside this tests/ folder."""
import importlib.util
import os
import sys


def load_script(name):
    path = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "..", "perf", f"{name}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
