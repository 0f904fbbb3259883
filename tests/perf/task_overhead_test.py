#!/usr/bin/env python3
"""perf/task_overhead on this machine's CPU workers: one JSON line whose costs are finite and not
negative, with the fan-out gaps (2, 5 and 14 handles a task; readied by a task, with small
handles, with a chain's data, and with it and a millisecond of work a task) wherever there are
two CPU workers or more, and a nonsense flag refused.

Usage: python3 tests/perf/task_overhead_test.py PATH/TO/task_overhead
"""

import json
import math
import subprocess
import sys
import unittest

PROGRAM = sys.argv.pop(1) if len(sys.argv) > 1 else "task_overhead"


class TaskOverheadTest(unittest.TestCase):
    def test_json_line(self):
        run = subprocess.run([PROGRAM, "--tasks", "40", "--rounds", "1"], capture_output=True,
                             text=True, timeout=120, check=True)
        lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
        self.assertEqual(len(lines), 1, run.stdout)
        line = json.loads(lines[0])
        keys = ["submit_us", "cpu_chain_us", "cpu_parallel_chain_us"]
        if line["cpu_workers"] >= 2:
            keys += ["cpu_handoff_us", "fanout_h2_us", "fanout_h5_us", "fanout_h14_us",
                     "fanout_task_released_us", "fanout_chainlike_us", "fanout_busy_us"]
        else:
            self.assertNotIn("fanout_h2_us", line)
        for key in keys:
            self.assertIn(key, line)
            self.assertTrue(math.isfinite(line[key]) and line[key] >= 0, (key, line[key]))
        if line["cpu_workers"] >= 2:
            self.assertIn("fan-out of", run.stderr)
            self.assertIn("fan-out readied by a task", run.stderr)

    def test_nonsense_flag(self):
        run = subprocess.run([PROGRAM, "--tasks", "many"], capture_output=True, text=True,
                             timeout=60)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("tasks", run.stderr)


if __name__ == "__main__":
    unittest.main()
