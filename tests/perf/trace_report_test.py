#!/usr/bin/env python3
"""Tests of perf/trace_report.py on a small tasks.rec and paje.trace written here, in the formats
StarPU 1.3's starpu_fxt_tool writes.

Usage: python3 tests/perf/trace_report_test.py PATH/TO/perf/trace_report.py
"""

import contextlib
import io
import os
import shutil
import sys
import tempfile
import unittest

from script_module import load_script

report = load_script("trace_report")

# Two workers over 0..10 ms: CPU0 busy 2 + 3 = 5 ms, CUDA0 busy 4 ms; one sync task that never ran.
# Dependencies: 3 on the sync task 1, 4 on 2 and 3; the critical path is 1 -> 3 -> 4, 0 + 4 + 3 ms.
TASKS_REC = """\
Name: _starpu_sync_task
JobId: 1
SubmitOrder: 1
Priority: 0
SubmitTime: 0.5
MPIRank: -1

Name: starcnn_conv2d_forward
Model: starcnn_conv2d_forward
JobId: 2
WorkerId: 0
MemoryNode: 0
SubmitTime: 0.1
StartTime: 100.0
EndTime: 102.0
Parameters: V10x4 V10x4
Sizes: 40 40

Name: starcnn_conv2d_forward
Model: starcnn_conv2d_forward
JobId: 3
DependsOn: 1
WorkerId: 1
MemoryNode: 1
StartTime: 101.0
EndTime: 105.0

Name: starcnn_sgd_update
JobId: 4
DependsOn: 2 3
DepLabels: task task
WorkerId: 0
MemoryNode: 0
StartTime: 107.0
EndTime: 110.0
"""

PAJE_HEADER = """\
%EventDef\tPajeCreateContainer\t7
%\tTime\tdate
%\tAlias\tstring
%\tType\tstring
%\tContainer\tstring
%\tName\tstring
%EndEventDef
%EventDef\tPajeStartLink\t18
%\tTime\tdate
%\tType\tstring
%\tContainer\tstring
%\tValue\tstring
%\tStartContainer\tstring
%\tKey\tstring
%EndEventDef
%EventDef\tPajeEndLink\t19
%\tTime\tdate
%\tType\tstring
%\tContainer\tstring
%\tValue\tstring
%\tEndContainer\tstring
%\tKey\tstring
%EndEventDef
%EventDef\tPajeSetVariable\t13
%\tTime\tdate
%\tContainer\tstring
%\tType\tstring
%\tValue\tdouble
%EndEventDef
%EventDef\tPajeAddVariable\t14
%\tTime\tdate
%\tContainer\tstring
%\tType\tstring
%\tValue\tdouble
%EndEventDef
"""

# Two RAM -> GPU copies (1000 and 3000 bytes), one GPU -> RAM (500 bytes), and a work-stealing
# link between workers, which is no transfer. The scheduler's counts: 3 submitted at 99 ms (before
# the window), then 2, 1 and 0; ready 2 at 100.5 ms, 0 at 104 ms (one step added), 1 at 108 ms.
PAJE_EVENTS = """\
13\t0.0\tsched\tnsubmitted\t0.0
13\t99.0\tsched nsubmitted\t3.000000
13\t101.0\tsched nsubmitted\t2.000000
13\t106.0\tsched nsubmitted\t1.000000
13\t110.0\tsched nsubmitted\t0.000000
13\t100.5\tsched nready\t2.000000
13\t104.0\tsched nready\t0.000000
14\t108.0\tsched nready\t1.000000
13\t100.5\tmm0\tuse\t7.000000
7\t0.000000000\tmn0\tMn\tp\tMEMNODE0
7\t0.000000000\tmm0\tMm\tmn0\tMEMMANAGER0
7\t1.000000000\tw0\tW\tt1\tCPU0
7\t1.000000000\tw1\tW\tt2\tCUDA0
18\t100.5\tF\tp\t1000\tmm0\tcom_1
19\t100.9\tF\tp\t1000\tmm1\tcom_1
18\t101.0\tPF\tp\t3000\tmm0\tcom_2
19\t101.5\tPF\tp\t3000\tmm1\tcom_2
18\t106.0\tF\tp\t500\tmm1\tcom_3
19\t106.5\tF\tp\t500\tmm0\tcom_3
18\t106.0\tWSL\tp\t0\tw0\tsteal_1
19\t106.0\tWSL\tp\t0\tw1\tsteal_1
"""


def run_report(*args):
    """trace_report's main with its printout swallowed; returns its exit status."""
    with contextlib.redirect_stdout(io.StringIO()):
        return report.main(["trace_report.py", *args])


class TraceReportTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="starcnn_trace_report_")
        with open(os.path.join(self.dir, "tasks.rec"), "w") as f:
            f.write(TASKS_REC)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write_paje(self):
        with open(os.path.join(self.dir, "paje.trace"), "w") as f:
            f.write(PAJE_HEADER + PAJE_EVENTS)

    def test_reads_executed_tasks_only(self):
        tasks = report.executed_tasks(report.read_rec(os.path.join(self.dir, "tasks.rec")))
        self.assertEqual([t["name"] for t in tasks],
                         ["starcnn_conv2d_forward", "starcnn_conv2d_forward",
                          "starcnn_sgd_update"])
        self.assertEqual([(t["worker"], t["start"], t["end"]) for t in tasks],
                         [(0, 100.0, 102.0), (1, 101.0, 105.0), (0, 107.0, 110.0)])
        self.assertEqual([t["kind"] for t in tasks], ["conv forward", "conv forward", "update"])

    def test_op_kinds(self):
        expected = {
            "starcnn_conv2d_backward_filter": "conv backward filter",
            "starcnn_conv2d_backward_data": "conv backward data",
            "starcnn_conv_block_forward": "conv forward",
            "starcnn_conv_block_backward": "conv backward",
            "starcnn_linear_backward": "linear",
            "starcnn_add_all": "reduction/other",
            "starcnn_merge": "merge/split",
            "starcnn_split": "merge/split",
            "starcnn_relu_maxpool_forward": "relu/maxpool",
            "starcnn_maxpool_backward": "relu/maxpool",
            "starcnn_linear_backward_weights": "linear",
            "starcnn_softmax_xent_forward": "loss",
            "starcnn_load_batch": "load",
            "starcnn_zero_fill": "reduction/other",
            "redux_task_between_replicates": "reduction/other",
            "relu_forward": "relu/maxpool",  # a codelet name without perf model symbol
        }
        for name, kind in expected.items():
            self.assertEqual(report.op_kind(name), kind, name)

    def test_paje_workers_and_transfers(self):
        self.write_paje()
        workers, transfers, counts = report.read_paje(os.path.join(self.dir, "paje.trace"))
        self.assertEqual(workers, {0: "CPU0", 1: "CUDA0"})
        self.assertEqual([(x["src"], x["dst"], x["bytes"]) for x in transfers],
                         [(0, 1, 1000), (0, 1, 3000), (1, 0, 500)])
        self.assertAlmostEqual(transfers[1]["end"] - transfers[1]["start"], 0.5)
        self.assertEqual(counts["nsubmitted"],
                         [(0.0, 0.0), (99.0, 3.0), (101.0, 2.0), (106.0, 1.0), (110.0, 0.0)])
        self.assertEqual(counts["nready"], [(100.5, 2.0), (104.0, 0.0), (108.0, 1.0)])
        self.assertEqual(report.count_at(counts["nsubmitted"], 100.0), 3.0)
        self.assertEqual(report.count_at(counts["nready"], 100.0), 0.0)

    def test_link_rates_keep_every_byte(self):
        self.write_paje()
        _, transfers, _ = report.read_paje(os.path.join(self.dir, "paje.trace"))
        rates = report.link_rates(transfers, 100.0, 110.0, bins=10)  # 1 ms bins
        self.assertEqual(sorted(rates), [(0, 1), (1, 0)])
        starts, to_gpu = rates[(0, 1)]
        self.assertEqual(starts, [float(b) for b in range(10)])
        # 1000 bytes within bin 0, 3000 within bin 1: bytes per ms / 1e6 is GB/s.
        self.assertAlmostEqual(to_gpu[0], 1000 / 1e6)
        self.assertAlmostEqual(to_gpu[1], 3000 / 1e6)
        self.assertEqual(to_gpu[2:], [0.0] * 8)
        # A transfer across a bin edge is split by its overlap: 500 bytes over 105.75..106.25.
        half = [dict(x, start=105.75, end=106.25) for x in transfers if x["src"] == 1]
        _, back = report.link_rates(half, 100.0, 110.0, bins=10)[(1, 0)]
        self.assertAlmostEqual(back[5], 250 / 1e6)
        self.assertAlmostEqual(back[6], 250 / 1e6)

    def test_critical_path(self):
        records = report.read_rec(os.path.join(self.dir, "tasks.rec"))
        total, chain = report.critical_path(records)
        self.assertAlmostEqual(total, 7.0)
        self.assertEqual(chain, ["1", "3", "4"])
        # A diamond whose long side goes through a task that did not run, a dependency on a job
        # without a record, and a chain of 5000 tasks (no recursion limit).
        diamond = [
            {"JobId": "a", "WorkerId": "0", "StartTime": "0", "EndTime": "1"},
            {"JobId": "b", "DependsOn": "a", "WorkerId": "0", "StartTime": "1", "EndTime": "6"},
            {"JobId": "s", "DependsOn": "b"},
            {"JobId": "c", "DependsOn": "a missing", "WorkerId": "1", "StartTime": "1",
             "EndTime": "3"},
            {"JobId": "d", "DependsOn": "c s", "WorkerId": "0", "StartTime": "6", "EndTime": "8"},
        ]
        self.assertEqual(report.critical_path(diamond), (8.0, ["a", "b", "s", "d"]))
        chain = [{"JobId": str(i), "DependsOn": str(i - 1) if i else "", "WorkerId": "0",
                  "StartTime": str(i), "EndTime": str(i + 0.5)} for i in range(5000)]
        total, jobs = report.critical_path(chain[::-1])
        self.assertAlmostEqual(total, 2500.0)
        self.assertEqual(len(jobs), 5000)

    def test_summary_busy_idle_and_bytes(self):
        self.write_paje()
        self.assertEqual(run_report(self.dir, "--no-plot"), 0)
        with open(os.path.join(self.dir, "summary.txt")) as f:
            text = f.read()
        self.assertIn("traced window: 10.000 ms", text)
        rows = {line.split()[0]: line.split()[1:] for line in text.splitlines() if line.strip()}
        # CPU0: busy 5 of 10 ms; CUDA0: 4 of 10 ms; together 9 of 20 ms.
        self.assertEqual(rows["CPU0"], ["5.000", "5.000", "50.0", "50.0", "2"])
        self.assertEqual(rows["CUDA0"], ["4.000", "6.000", "40.0", "60.0", "1"])
        self.assertEqual(rows["all"], ["9.000", "11.000", "45.0", "55.0", "3"])
        self.assertIn("critical path: 7.000 ms over 3 tasks", text)
        self.assertIn("work per worker: 4.500 ms", text)
        self.assertIn("traced window: 1.43 x the larger bound (7.000 ms)", text)
        self.assertIn("submitted tasks in the window: at most 3", text)
        self.assertIn("ready tasks in the window: at most 2", text)
        self.assertIn("bytes moved between memory nodes: 4500", text)
        # Peak of node 0 -> 1 in 1/6 ms bins: 3000 bytes over 0.5 ms, 0.006 GB/s.
        self.assertRegex(text, r"node 0 -> 1\s+2\s+0\.004\s+0\.900\s+0\.00\s+0\.006\n")
        self.assertNotIn("trace.png panels", text)  # --no-plot

    def test_ranks_of_a_run_under_mpirun_are_told_apart(self):
        # Worker 0 of rank 0 busy 1 ms, worker 0 of rank 1 busy 3 ms (the same WorkerId).
        with open(os.path.join(self.dir, "tasks.rec"), "w") as f:
            for rank, start, end in ((0, 100.0, 101.0), (1, 102.0, 105.0)):
                f.write(f"Name: starcnn_relu\nWorkerId: 0\nMemoryNode: 0\nMPIRank: {rank}\n"
                        f"StartTime: {start}\nEndTime: {end}\n\n")
        with open(os.path.join(self.dir, "paje.trace"), "w") as f:
            f.write(PAJE_HEADER + "7\t1.0\t0_w0\tW\t0_t1\t0_CPU0\n"
                    "7\t1.0\t1_w0\tW\t1_t1\t1_CPU0\n")
        workers, _, _ = report.read_paje(os.path.join(self.dir, "paje.trace"))
        self.assertEqual(sorted(workers.values()), ["0_CPU0", "1_CPU0"])
        self.assertEqual(run_report(self.dir, "--no-plot"), 0)
        with open(os.path.join(self.dir, "summary.txt")) as f:
            rows = {line.split()[0]: line.split()[1:] for line in f if line.strip()}
        self.assertEqual(rows["0_CPU0"][0], "1.000")
        self.assertEqual(rows["1_CPU0"][0], "3.000")

    def test_summary_without_paje_says_so(self):
        run_report(self.dir, "--no-plot")
        with open(os.path.join(self.dir, "summary.txt")) as f:
            text = f.read()
        self.assertIn("transfers: not available", text)
        self.assertIn("submitted tasks: not available", text)

    def test_panels(self):
        self.write_paje()
        records = report.read_rec(os.path.join(self.dir, "tasks.rec"))
        workers, transfers, counts = report.read_paje(os.path.join(self.dir, "paje.trace"))
        panels = report.build_panels(report.executed_tasks(records), workers, transfers, counts,
                                     7.0)
        by_name = {p["name"]: p for p in panels}
        self.assertEqual(list(by_name), ["gantt", "counts", "transfers", "idle", "critical path"])
        gantt = by_name["gantt"]
        self.assertEqual(gantt["rows"][:2], ["CPU0", "CUDA0"])
        spans = {legend: s for legend, _, s in gantt["series"]}
        self.assertEqual(spans["update"], [(7.0, 10.0, 0, 0.4)])
        self.assertEqual(len(spans["transfer"]), 3)
        counts_series = {legend: (xs, ys) for legend, _, xs, ys in by_name["counts"]["series"]}
        # From the window's start (3 submitted, 0 ready) to its end (0 and 1).
        self.assertEqual(counts_series["submitted"], ([0.0, 1.0, 6.0, 10.0, 10.0],
                                                      [3.0, 2.0, 1.0, 0.0, 0.0]))
        self.assertEqual(counts_series["ready"], ([0.0, 0.5, 4.0, 8.0, 10.0],
                                                  [0.0, 2.0, 0.0, 1.0, 1.0]))
        self.assertEqual([s[0] for s in by_name["transfers"]["series"]],
                         ["node 0 -> 1", "node 1 -> 0"])
        self.assertEqual(by_name["idle"]["labels"], ["CPU0", "CUDA0"])
        self.assertEqual(by_name["idle"]["values"], [50.0, 60.0])
        self.assertEqual(by_name["critical path"]["values"], [10.0, 7.0, 4.5])

    def test_trace_png_and_its_panels_line_when_a_plotter_exists(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            if not shutil.which("gnuplot"):
                self.skipTest("neither matplotlib nor gnuplot")
        self.write_paje()
        self.assertEqual(run_report(self.dir), 0)
        with open(os.path.join(self.dir, "trace.png"), "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        with open(os.path.join(self.dir, "summary.txt")) as f:
            self.assertIn("trace.png panels: gantt, counts, transfers, idle, critical path\n",
                          f.read())


if __name__ == "__main__":
    unittest.main()
