#!/usr/bin/env python3
"""Tests of perf/trace_gaps.py on a small tasks.rec written here (starpu_fxt_tool's format, ms).

Usage: python3 tests/perf/trace_gaps_test.py PATH/TO/perf/trace_gaps.py
"""

import os
import sys
import tempfile
import unittest

from script_module import load_script

gaps = load_script("trace_gaps")


def task(job, name, worker, submit, start, end, depends="", node=0, handles=""):
    lines = [f"Name: {name}", f"JobId: {job}", f"WorkerId: {worker}", f"MemoryNode: {node}",
             f"SubmitTime: {submit}", f"StartTime: {start}", f"EndTime: {end}"]
    if depends:
        lines.append(f"DependsOn: {depends}")
    if handles:
        lines.append(f"Handles: {handles}")
    return "\n".join(lines) + "\n"


# 1 on worker 0, ready at its submission (gap 10 us); 2 after 1 on worker 1 (hand-off, 30 us);
# 3 after 1 and 2, last input 2 on worker 1, runs there (same worker, 20 us); 4 a reduction on
# worker 2 after 3 (40 us); 5 on the CUDA worker after 3 (memory node 1, 5 us); 6 submitted after
# its input ended (ready at submission, 50 us).
TASKS_REC = "\n".join([
    task(1, "starcnn_conv2d_forward", 0, 1.0, 1.010, 1.100),
    task(2, "starcnn_relu_maxpool_forward", 1, 1.0, 1.130, 1.200, "1"),
    task(3, "starcnn_linear_forward", 1, 1.0, 1.220, 1.300, "1 2", handles="a1 b2 c3"),
    task(4, "redux_task_between_replicates", 2, 1.0, 1.340, 1.350, "3"),
    task(5, "starcnn_linear_forward", 3, 1.0, 1.305, 1.400, "3", node=1, handles="d4"),
    task(6, "starcnn_sgd_update", 0, 1.500, 1.550, 1.600, "4"),
])


class TraceGapsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        with open(os.path.join(self.dir, "tasks.rec"), "w") as f:
            f.write(TASKS_REC)

    def test_categories(self):
        by_kind = gaps.gaps(gaps.read_rec(os.path.join(self.dir, "tasks.rec")))
        rounded = {kind: sorted(round(v, 6) for v in values) for kind, values in by_kind.items()}
        self.assertEqual(rounded, {"ready at submission": [10, 50],
                                   "handed to another worker": [30],
                                   "same worker": [20],
                                   "reduction tasks": [40],
                                   "handed to another worker (CUDA worker)": [5]})

    def test_codelets_and_release_order(self):
        records = gaps.read_rec(os.path.join(self.dir, "tasks.rec"))
        codelets = {name: (handles, sorted(round(v, 6) for v in values))
                    for name, (handles, values) in gaps.by_codelet(records).items()}
        # Tasks 1 and 6 were ready at their submission: not readied by an input task.
        self.assertEqual(codelets, {"starcnn_relu_maxpool_forward": (0, [30]),
                                    "starcnn_linear_forward": (3, [5, 20]),
                                    "redux_task_between_replicates": (0, [40])})
        # 3 readied 4 and 5 together: 5 started first (5 us), then 4 (40 us).
        order = {k: [round(v, 6) for v in values]
                 for k, values in gaps.by_release_order(records).items()}
        self.assertEqual(order, {1: [5], 2: [40]})

    def test_durations_by_worker(self):
        records = gaps.read_rec(os.path.join(self.dir, "tasks.rec"))
        durations = {name: {w: [round(v, 6) for v in runs] for w, runs in workers.items()}
                     for name, workers in gaps.durations_by_worker(records).items()}
        # Only starcnn_linear_forward ran on two workers (3 on worker 1, 5 on worker 3).
        self.assertEqual(durations, {"starcnn_linear_forward": {1: [80], 3: [95]}})


if __name__ == "__main__":
    unittest.main()
