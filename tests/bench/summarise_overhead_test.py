"""bench/gpu/summarise_overhead.py on fabricated measurement lines: medians, spreads, added values
as medians of per-round differences, and the ratios to the baseline, the reference and the
matching bare-CUPTI variant. Run with the script's folder on PYTHONPATH (ctest sets it)."""
import contextlib
import io
import os
import tempfile
import unittest

import summarise_overhead as so

# Three rounds; round 2 is slow for every variant (+1.0), which per-round differences cancel.
LINES = """
# a comment, and a line that is not a measurement
mode=plain kernels=40000 median_us_per_kernel=9.0
workload=pytorch variant=plain round=1 us_per_kernel=5.0 wall_s=3.0
workload=pytorch variant=plain round=2 us_per_kernel=6.0 wall_s=3.1
workload=pytorch variant=plain round=3 us_per_kernel=5.2 wall_s=3.0
workload=pytorch variant=bare-lean round=1 us_per_kernel=5.5
workload=pytorch variant=bare-lean round=2 us_per_kernel=6.5
workload=pytorch variant=bare-lean round=3 us_per_kernel=5.7
workload=pytorch variant=cuscope-lean round=1 us_per_kernel=6.0
workload=pytorch variant=cuscope-lean round=2 us_per_kernel=7.0
workload=pytorch variant=cuscope-lean round=3 us_per_kernel=6.4
workload=pytorch variant=cuscope-monitor round=1 us_per_kernel=5.75
workload=pytorch variant=cuscope-monitor round=3 us_per_kernel=5.95
workload=pytorch variant=torch.profiler round=1 us_per_kernel=15.0
workload=pytorch variant=torch.profiler round=2 us_per_kernel=16.0
workload=pytorch variant=torch.profiler round=3 us_per_kernel=15.2
workload=launch variant=plain round=1 us_per_kernel=2.0
workload=launch variant=cuscope-lean round=1 us_per_kernel=2.5
""".strip().splitlines()


def rows_by_variant(rows):
    return {r["variant"]: r for r in rows}


class ParseLinesTest(unittest.TestCase):
    def test_keeps_only_measurement_lines(self):
        runs = so.parse_lines(LINES)
        self.assertEqual(len(runs), 16)
        self.assertEqual(runs[0], {"workload": "pytorch", "variant": "plain", "round": 1,
                                   "us_per_kernel": 5.0, "wall_s": 3.0})

    def test_text_fields_are_not_metrics(self):
        (run,) = so.parse_lines(["workload=w variant=v round=1 note=slow us=2"])
        self.assertNotIn("note", run)
        self.assertEqual(run["us"], 2.0)


class SummariseTest(unittest.TestCase):
    def setUp(self):
        self.runs = so.parse_lines(LINES)
        self.rows = so.summarise(self.runs, "pytorch", "us_per_kernel", "plain", "torch.profiler",
                                 {"cuscope-monitor": "bare-lean"})
        self.by = rows_by_variant(self.rows)

    def test_baseline_first_then_the_rest_sorted(self):
        self.assertEqual([r["variant"] for r in self.rows],
                         ["plain", "bare-lean", "cuscope-lean", "cuscope-monitor", "torch.profiler"])

    def test_median_and_spread(self):
        r = self.by["cuscope-lean"]
        self.assertEqual((r["n"], r["median"], r["min"], r["max"]), (3, 6.4, 6.0, 7.0))

    def test_added_is_the_median_of_per_round_differences(self):
        # Differences to plain: 1.0, 1.0, 1.2 -> 1.0 (the difference of medians would be 1.2).
        self.assertAlmostEqual(self.by["cuscope-lean"]["added"], 1.0)
        self.assertAlmostEqual(self.by["plain"]["added"], 0.0)
        # Only the rounds both have: 0.75 and 0.75.
        self.assertAlmostEqual(self.by["cuscope-monitor"]["added"], 0.75)

    def test_ratios(self):
        lean = self.by["cuscope-lean"]
        self.assertAlmostEqual(lean["ratio_to_baseline"], 6.4 / 5.2)
        self.assertAlmostEqual(lean["ratio_to_reference"], 1.0 / 10.0)  # torch.profiler adds 10.0
        self.assertEqual(lean["bare"], "bare-lean")  # cuscope-X matches bare-X
        self.assertAlmostEqual(lean["ratio_to_bare"], 1.0 / 0.5)
        monitor = self.by["cuscope-monitor"]
        self.assertEqual(monitor["bare"], "bare-lean")  # by --pair
        self.assertAlmostEqual(monitor["ratio_to_bare"], 0.75 / 0.5)
        self.assertIsNone(self.by["torch.profiler"]["ratio_to_reference"])
        self.assertIsNone(self.by["bare-lean"]["bare"])

    def test_a_twin_whose_runs_all_failed_is_no_twin(self):
        rows = rows_by_variant(so.summarise(self.runs, "pytorch", "us_per_kernel", "plain",
                                            pairs={"cuscope-lean": "bare-toggle"}))
        self.assertIsNone(rows["cuscope-lean"]["bare"])
        self.assertIsNone(rows["cuscope-lean"]["ratio_to_bare"])

    def test_a_reference_that_adds_nothing_gives_no_ratio(self):
        rows = rows_by_variant(so.summarise(self.runs, "pytorch", "us_per_kernel", "plain", "plain"))
        self.assertIsNone(rows["cuscope-lean"]["ratio_to_reference"])

    def test_workloads_are_kept_apart(self):
        rows = rows_by_variant(so.summarise(self.runs, "launch", "us_per_kernel", "plain", "torch.profiler"))
        self.assertEqual(sorted(rows), ["cuscope-lean", "plain"])
        self.assertAlmostEqual(rows["cuscope-lean"]["added"], 0.5)
        self.assertIsNone(rows["cuscope-lean"]["ratio_to_reference"])  # no torch.profiler here
        self.assertIsNone(rows["cuscope-lean"]["bare"])

    def test_display_order(self):
        rows = so.summarise(self.runs, "pytorch", "us_per_kernel", "plain", order=["torch.profiler", "cuscope-lean"])
        self.assertEqual([r["variant"] for r in rows][:3], ["plain", "torch.profiler", "cuscope-lean"])


class MainTest(unittest.TestCase):
    def test_prints_a_table_per_workload(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("\n".join(LINES))
        self.addCleanup(os.unlink, f.name)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = so.main([f.name, "--metric", "us_per_kernel", "--reference", "torch.profiler",
                          "--pair", "cuscope-monitor=bare-lean"])
        self.assertEqual(rc, 0)
        text = out.getvalue()
        self.assertIn("== pytorch: us_per_kernel (3 rounds", text)
        self.assertIn("== launch: us_per_kernel (1 rounds", text)
        lean = next(line for line in text.splitlines() if line.startswith("cuscope-lean") and "6.400" in line)
        self.assertRegex(lean, r"6\.000-7\.000 +1\.000 +1\.231 +0\.10 +2\.00 \(bare-lean\)")
        # The launch workload has no bare-CUPTI variant: no column for it.
        pytorch_part, launch_part = text.split("== launch")
        self.assertIn("added/bare", pytorch_part)
        self.assertNotIn("added/bare", launch_part)

    def test_no_measurements_is_an_error(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("nothing here\n")
        self.addCleanup(os.unlink, f.name)
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(so.main([f.name, "--metric", "us_per_kernel"]), 1)


if __name__ == "__main__":
    unittest.main()
