#!/usr/bin/env python3
"""perf/compare_schedulers.py from canned runs: a stand-in train program answers per policy
(STARPU_SCHED) with a summary, a crash, a hang, no JSON or another policy than asked; every
policy must reach the CSV and the Markdown table, the failed ones with their error, and the
numbers must come from the JSON summaries."""
import csv
import importlib.util
import os
import shutil
import stat
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "perf", "compare_schedulers.py")
spec = importlib.util.spec_from_file_location("compare_schedulers", SCRIPT)
cs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cs)

FAKE_TRAIN = r'''#!PYTHON
import json, os, sys, time
policy = os.environ["STARPU_SCHED"]
stats = {"idle_fraction": 0.25, "workers": {
             "cpu": {"count": 2, "busy_fraction": 0.7, "idle_fraction": 0.3, "tasks": 600},
             "cuda": {"count": 1, "busy_fraction": 0.85, "idle_fraction": 0.15, "tasks": 400}},
         "bytes": {"ram_to_gpu": 3000000, "gpu_to_ram": 1500000, "gpu_to_gpu": 0},
         "transfers": {"ram_to_gpu": 30, "gpu_to_ram": 15, "gpu_to_gpu": 0}}
speed = {"fast": 4000.0, "slow": 1000.0, "dmda": 2000.0}
def summary(name):
    return json.dumps({"event": "summary", "scheduler": name, "workers": "2 CPU workers, 1 CUDA worker",
                       "batch": 64, "steps": 10, "images_per_s": speed.get(name, 2000.0),
                       "test_accuracy": 0.9, "train_loss": 0.5, "stats": stats})
if policy == "crash":
    print("loading", flush=True); sys.stderr.write("first\ntrain: error: the training loss is nan\n"); sys.exit(1)
if policy == "hang":
    time.sleep(30)
if policy == "silent":
    print("no summary here"); sys.exit(0)
if policy == "other":
    sys.stderr.write("Warning: scheduling policy 'other' was not found\n"); print(summary("lws")); sys.exit(0)
print("progress line")
print(summary(policy))
'''


class CompareSchedulersTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="compare_schedulers_test")
        self.train = os.path.join(self.dir, "train")
        with open(self.train, "w") as f:
            f.write(FAKE_TRAIN.replace("PYTHON", sys.executable))
        os.chmod(self.train, os.stat(self.train).st_mode | stat.S_IXUSR)
        self.out = os.path.join(self.dir, "out")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_main(self, policies):
        argv = ["--train", self.train, "--policies", ",".join(policies), "--out", self.out,
                "--steps", "10", "--batch", "64", "--timeout", "3", "--calibrate", "none"]
        stdout = sys.stdout
        sys.stdout = open(os.devnull, "w")
        try:
            self.assertEqual(cs.main(argv), 0)
        finally:
            sys.stdout.close()
            sys.stdout = stdout
        with open(os.path.join(self.out, "results.csv")) as f:
            rows = list(csv.DictReader(f))
        with open(os.path.join(self.out, "results.md")) as f:
            table = f.read()
        return rows, table

    def test_every_policy_reaches_the_csv_failed_ones_with_their_error(self):
        policies = ["slow", "crash", "fast", "hang", "silent", "other"]
        rows, _ = self.run_main(policies)
        self.assertEqual([r["policy"] for r in rows], policies)
        by = {r["policy"]: r for r in rows}
        for name in ("slow", "fast"):
            self.assertEqual(by[name]["status"], "ok")
            self.assertEqual(by[name]["error"], "")
        for name in ("crash", "hang", "silent", "other"):
            self.assertEqual(by[name]["status"], "failed")
            self.assertEqual(by[name]["images_per_s"], "")
        self.assertIn("exit status 1", by["crash"]["error"])
        self.assertIn("the training loss is nan", by["crash"]["error"])
        self.assertIn("timeout", by["hang"]["error"])
        self.assertIn("no JSON summary", by["silent"]["error"])
        self.assertIn("ran lws instead", by["other"]["error"])

    def test_csv_numbers_come_from_the_summary(self):
        rows, _ = self.run_main(["slow"])
        r = rows[0]
        self.assertEqual(list(r.keys()), cs.CSV_FIELDS)
        self.assertAlmostEqual(float(r["images_per_s"]), 1000.0)
        self.assertAlmostEqual(float(r["step_s"]), 0.064)  # 64 images at 1000 images/s
        self.assertAlmostEqual(float(r["idle_fraction"]), 0.25)
        self.assertAlmostEqual(float(r["cpu_busy_fraction"]), 0.7)
        self.assertAlmostEqual(float(r["cuda_busy_fraction"]), 0.85)
        self.assertEqual(int(r["cpu_tasks"]), 600)
        self.assertEqual(int(r["cuda_tasks"]), 400)
        self.assertEqual(int(r["bytes_ram_to_gpu"]), 3000000)
        self.assertEqual(int(r["bytes_gpu_to_ram"]), 1500000)
        self.assertEqual(int(r["bytes_gpu_to_gpu"]), 0)
        self.assertAlmostEqual(float(r["test_accuracy"]), 0.9)

    def test_markdown_puts_the_fastest_first_and_lists_failures(self):
        _, table = self.run_main(["slow", "crash", "fast", "dmda"])
        lines = [l for l in table.splitlines() if l.startswith("| ")]
        self.assertTrue(lines[0].startswith("| policy |"))
        body = [l.split("|")[1].strip() for l in lines[1:]]
        self.assertEqual(body, ["fast", "dmda", "slow", "crash"])
        columns = {l.count("|") for l in lines}
        self.assertEqual(len(columns), 1, "every row has as many cells as the header")
        fast = [c.strip() for c in lines[1].split("|")[1:-1]]
        # step ms, images/s, idle %, CPU busy %, CUDA busy %, RAM->GPU MB, GPU->RAM MB, test acc %
        self.assertEqual(fast[1:8], ["16.00", "4000", "25.0", "70.0", "85.0", "3.0", "1.5"])
        self.assertEqual(fast[9], "90.00")
        self.assertIn("- `crash`: exit status 1", table)

    def test_chart_is_a_png_when_a_plotting_tool_is_there(self):
        self.run_main(["slow", "crash", "fast"])
        path = os.path.join(self.out, "images_per_s.png")
        try:
            import matplotlib  # noqa: F401
            tool = True
        except ImportError:
            tool = shutil.which("gnuplot") is not None
        if not tool:
            self.skipTest("neither matplotlib nor gnuplot")
        with open(path, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertGreater(os.path.getsize(path), 2000)


if __name__ == "__main__":
    unittest.main()
