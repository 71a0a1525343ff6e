"""bench/gpu/summarise_windows.py on fabricated process lines: the median over processes of each
process's added time, its range, and the ratios to torch.profiler and to the bare twin. Run with the
script's folder on PYTHONPATH (ctest sets it)."""
import contextlib
import io
import os
import tempfile
import unittest

import summarise_windows as sw

LINES = """
== 3 rounds x 5 processes
workload=pytorch collector=torch.profiler round=1 mode=windows plain_us_per_kernel=7.0 added_us_per_kernel=4.0
workload=pytorch collector=torch.profiler round=2 mode=windows plain_us_per_kernel=9.0 added_us_per_kernel=5.0
workload=pytorch collector=torch.profiler round=3 mode=windows plain_us_per_kernel=8.0 added_us_per_kernel=3.0
workload=pytorch collector=cuscope-lean round=1 mode=windows plain_us_per_kernel=7.5 added_us_per_kernel=2.5
workload=pytorch collector=cuscope-lean round=2 mode=windows plain_us_per_kernel=8.5 added_us_per_kernel=-0.5
workload=pytorch collector=cuscope-lean round=3 mode=windows plain_us_per_kernel=7.0 added_us_per_kernel=2.0
workload=pytorch collector=bare-lean round=1 mode=windows plain_us_per_kernel=7.0 added_us_per_kernel=1.6
workload=pytorch collector=bare-kernel round=1 mode=windows plain_us_per_kernel=7.0 added_us_per_kernel=0.0
workload=pytorch collector=cuscope-kernel round=1 mode=windows plain_us_per_kernel=7.0 added_us_per_kernel=0.5
workload=launch collector=cuscope-lean round=1 mode=windows plain_us_per_kernel=4.0 added_us_per_kernel=1.5
workload=launch collector=bare-lean-driver-callback round=1 mode=windows plain_us_per_kernel=4.0 added_us_per_kernel=0.6
round 1: plain=7.0 window=9.0
""".strip().splitlines()


def by_collector(entries):
    return {e["collector"]: e for e in entries}


class SummariseWindowsTest(unittest.TestCase):
    def setUp(self):
        self.summary = sw.summarise(sw.parse(LINES))

    def test_only_process_lines_are_read(self):
        self.assertEqual(len(sw.parse(LINES)), 11)

    def test_added_is_the_median_over_processes_with_their_range(self):
        torch = by_collector(self.summary["pytorch"])["torch.profiler"]
        self.assertEqual((torch["n"], torch["added"], torch["low"], torch["high"], torch["plain"]), (3, 4.0, 3.0, 5.0, 8.0))
        lean = by_collector(self.summary["pytorch"])["cuscope-lean"]
        self.assertEqual((lean["added"], lean["low"]), (2.0, -0.5))  # a negative process is kept

    def test_ratios_to_torch_profiler_and_to_the_bare_twin(self):
        pytorch = by_collector(self.summary["pytorch"])
        self.assertAlmostEqual(pytorch["cuscope-lean"]["to_torch"], 0.5)
        self.assertAlmostEqual(pytorch["cuscope-lean"]["to_twin"], 2.0 / 1.6)
        self.assertEqual(pytorch["cuscope-lean"]["twin"], "bare-lean")
        self.assertIsNone(pytorch["torch.profiler"]["to_torch"])  # not against itself
        self.assertIsNone(pytorch["bare-lean"]["to_twin"])  # a bare collector has no twin
        self.assertIsNone(pytorch["cuscope-kernel"]["to_twin"])  # its twin added nothing: no ratio

    def test_a_workload_without_torch_profiler_or_twin_has_no_ratio(self):
        launch = by_collector(self.summary["launch"])
        self.assertIsNone(launch["cuscope-lean"]["to_torch"])
        self.assertIsNone(launch["cuscope-lean"]["to_twin"])  # no bare-lean process in this workload

    def test_table_names_each_collector_and_its_ratios(self):
        table = sw.format_table(self.summary)
        self.assertIn("== pytorch", table)
        row = next(line for line in table.splitlines() if line.startswith("cuscope-lean") and "0.50" in line)
        self.assertIn("1.25 (bare-lean)", row)

    def test_a_file_without_measurements_is_an_error(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("== nothing ran\n")
        try:
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertEqual(sw.main(["summarise_windows.py", f.name]), 1)
            self.assertIn("no measurement", err.getvalue())
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
