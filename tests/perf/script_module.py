"""Loads a perf/ script as a module for its test: the path given as the test's first argument
(ctest passes the source tree's), else perf/NAME.py beside this tests/ folder; writes the
stand-in programs the tests run in its place."""
import importlib.util
import os
import stat
import sys


def load_script(name):
    path = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "..", "perf", f"{name}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_stand_in(folder, name, source):
    """Writes `source`, a Python program whose first line is '#!PYTHON', as the executable
    folder/name run by this Python; returns its path."""
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(source.replace("PYTHON", sys.executable, 1))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path
