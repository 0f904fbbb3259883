#!/usr/bin/env python3
"""perf/validate_simulation.py from a canned results.jsonl and a stand-in simulate (no StarPU run):
every row is simulated with its own scheduler, --cpu-chains, --fusion, --cuda-chain, --math and
STARCNN_FOLD_UPDATE,
the op-times rows (timed op by op) are left out, --chains-rule overrides
the chains mode of the rows it matches, a plan given on the command line (cpu+gpu without a
search) is a row of its own, the task counts are compared, and a row that stops on a shape the
models lack is simulated again with --estimate where asked."""
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_module import load_script, write_stand_in  # noqa: E402

vs = load_script("validate_simulation")

# Answers step_ms 2.0 (2.2 with STARCNN_FOLD_UPDATE=1) and 20 tasks a step, except: chains pinned,
# 10 tasks; plan cpu without --estimate, a missing shape.
FAKE_SIMULATE = r'''#!PYTHON
import json, os, sys
a = sys.argv[1:]
arg = lambda name: a[a.index(name) + 1]
if arg("--plan") == "cpu" and "--estimate" not in a:
    sys.stderr.write("simulate: error: the perf models have no calibrated time of relu\n")
    sys.exit(1)
pinned = arg("--cpu-chains") == "pinned"
fold = os.environ["STARCNN_FOLD_UPDATE"] == "1"
print(json.dumps({"step_ms": 2.2 if fold else 2.0, "tasks_per_step": 10 if pinned else 20,
                  "overheads": "", "estimated_shapes": ["x"] if "--estimate" in a else [],
                  "sched": os.environ["STARPU_SCHED"], "args": a}))
'''


def line(**fields):
    base = {"engine": "starcnn", "step": "bench", "network": "lenet", "batch": 64,
            "cuda_workers": 1, "cpu_workers": 15, "micro_batches": 1, "scheduler": "dmda",
            "cpu_chains": "auto", "fusion": "on", "tasks_per_step": 20}
    base.update(fields)
    return json.dumps(base)


class ValidateSimulationTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="validate_simulation_test")
        self.simulate = write_stand_in(self.dir, "simulate", FAKE_SIMULATE)
        self.models = os.path.join(self.dir, "home")
        os.makedirs(self.models)
        self.results = os.path.join(self.dir, "results.jsonl")
        with open(self.results, "w") as f:
            f.write("\n".join([
                line(config="all-cuda", plan="cuda", step_ms=1.0),
                line(config="all-cuda", plan="cuda", step_ms=3.0),
                line(config="cpu+gpu", plan="cuda", step_ms=1.0, search_cpu_workers=15,
                     auto_candidates=[{"plan": "samples:8", "measured_ms": 4.0},
                                      {"plan": "cpu", "measured_ms": None}]),
                line(step="mps-samples-8", config="cpu+gpu", plan="samples:8",
                     cpu_chains="pinned", cuda_chain="graph", tasks_per_step=12, step_ms=2.5),
                line(step="cpu-lws", config="cpu-only", plan="cpu", scheduler="lws",
                     cuda_workers=0, cpu_workers=16, micro_batches=8, step_ms=1.6),
                line(step="op-times-tf32", config="gpu-only", plan="cuda", step_ms=9.0),
                line(step="bench-fold", config="all-cuda", plan="cuda", fold_update=True,
                     step_ms=2.2),
                json.dumps({"engine": "pytorch", "step": "torch", "step_ms": 1.0}),
            ]) + "\n")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_main(self, *extra):
        out = os.path.join(self.dir, "out")
        argv = sys.argv
        sys.argv = ["validate_simulation.py", "--simulate", self.simulate, "--results",
                    self.results, "--models", f"mps-*={self.models},*={self.models}", "--out",
                    out] + list(extra)
        try:
            vs.main()
        finally:
            sys.argv = argv
        with open(os.path.join(out, "validation.jsonl")) as f:
            rows = [json.loads(text) for text in f]
        with open(os.path.join(out, "validation.md")) as f:
            table = f.read()
        return {(r["step"], r["config"], r["plan"]): r for r in rows}, table

    def test_rows_flags_and_task_counts(self):
        rows, table = self.run_main("--chains-rule", "bench:all-cuda/samples:.*=scheduled",
                                    "--chains-rule", "bench/samples:.*=pinned")
        self.assertEqual(len(rows), 5)
        cuda = rows[("bench", "all-cuda", "cuda")]
        self.assertEqual(cuda["measured_ms"], 2.0)  # the median of the two repeats
        self.assertAlmostEqual(cuda["error"], 0.0)
        # Rows older than the cuda_chain field ran layer by layer.
        self.assertIn("--cpu-chains auto --fusion on --cuda-chain off --math tf32", cuda["command"])
        self.assertNotIn(("op-times-tf32", "gpu-only", "cuda"), rows)  # events per op: left out
        self.assertTrue(cuda["command"].startswith("STARPU_SCHED=dmda "))
        candidate = rows[("bench", "auto candidate", "samples:8")]
        self.assertEqual(candidate["simulated_cpu_chains"], "pinned")  # the rule
        self.assertEqual(candidate["cpus"], 15)
        self.assertAlmostEqual(candidate["error"], -0.5)
        split = rows[("mps-samples-8", "cpu+gpu", "samples:8")]
        self.assertEqual((split["tasks_per_step"], split["simulated_tasks_per_step"]), (12, 10))
        self.assertIn("--cuda-chain graph", split["command"])
        self.assertIn("12/10 !", table)
        lws = rows[("cpu-lws", "cpu-only", "cpu")]
        self.assertIsNone(lws["simulated_ms"])
        self.assertIn("no calibrated time of relu", lws["simulate_error"])
        self.assertTrue(lws["command"].startswith("STARPU_SCHED=lws "))
        self.assertIn("tasks per step differ in 1", table)
        fold = rows[("bench-fold", "all-cuda", "cuda")]  # simulated with the fold, as it ran
        self.assertAlmostEqual(fold["error"], 0.0)
        self.assertTrue(fold["command"].startswith("STARPU_SCHED=dmda STARCNN_FOLD_UPDATE=1 "))
        self.assertFalse(cuda["fold_update"])

    def test_replace_rows(self):
        self.run_main()
        rows, table = self.run_main("--estimate-missing", "--plans", "cpu", "--replace-rows")
        self.assertEqual(len(rows), 5)
        self.assertEqual(rows[("cpu-lws", "cpu-only", "cpu")]["simulated_ms"], 2.0)  # again
        self.assertAlmostEqual(rows[("bench", "all-cuda", "cuda")]["error"], 0.0)  # kept
        self.assertIn("2 of 5 simulated within 15%", table)

    def test_cpu_only_overheads(self):
        own = os.path.join(self.dir, "overhead-cpu.json")
        with open(own, "w") as f:
            f.write('{"submit_us": 1.5, "cpu_chain_us": 7.0}\n')
        rows, _ = self.run_main("--estimate-missing", "--cpu-only-overheads", own)
        self.assertIn(f"--overheads {own}", rows[("cpu-lws", "cpu-only", "cpu")]["command"])
        for key in (("bench", "all-cuda", "cuda"), ("mps-samples-8", "cpu+gpu", "samples:8")):
            self.assertNotIn("--overheads", rows[key]["command"])  # their home's own
        with self.assertRaises(SystemExit):
            self.run_main("--cpu-only-overheads", os.path.join(self.dir, "missing.json"))

    def test_estimate_missing(self):
        rows, table = self.run_main("--estimate-missing")
        lws = rows[("cpu-lws", "cpu-only", "cpu")]
        self.assertEqual(lws["simulated_ms"], 2.0)
        self.assertEqual(lws["estimated_shapes"], ["x"])
        self.assertIn("(est. 1)", table)
        self.assertIn("| cpu-lws | cpu-only | 0 / 1 |", table)

    def test_whole_gpu_table(self):
        _, table = self.run_main()
        self.assertNotIn("whole GPU's validation table", table)  # no splits step: no table
        with open(self.results, "a") as f:
            f.write(line(step="splits-lenet-64-samples-8", config="cpu+gpu", plan="samples:8",
                         step_ms=1.8) + "\n")
            f.write(line(step="bench", config="cpu-only", plan="cpu", step_ms=4.0) + "\n")
        _, table = self.run_main()
        self.assertIn("| lenet | 64 | 2.000 / 2.000 (+0.0%) | 4.000 / not simulated | ", table)
        self.assertIn("2 of 3 of this table within 15%.", table)  # the unsimulated one fails
        _, table = self.run_main("--estimate-missing")
        self.assertIn("| lenet | 64 | 2.000 / 2.000 (+0.0%) | 4.000 / 2.000 (-50.0%) | "
                      "`samples:8` 1.800 / 2.000 (+11.1%) |", table)
        self.assertIn("2 of 3 of this table within 15%.", table)


if __name__ == "__main__":
    unittest.main()
