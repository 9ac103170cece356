"""Campaigns: the experiments' large runs (the soundness harness, the Fig. 7 schedulability
sweep, the synthesis comparison, the LaME property check) split into deterministic batches,
run in this process or on a Dask cluster, and kept per batch so that a re-run resumes.

- ``plan``: what a campaign is — its kind, the parameters that determine its results (its
  identity), its batches (a batch: systems ``first .. first + count - 1`` of one seed), the
  build that computes them, and how batch results merge (in plan order: seed order).
- ``store``: the campaign folder — one run id, ``manifest.json``, one atomically written file
  per finished batch, ``result.json`` once every batch is in.
- ``engine``: where batches run — in this process, or on Dask (an embedded local cluster on
  loopback using every core, or a running cluster given by address). Only batches travel; the
  C++ work stays in the nanobind extension on the workers.
- ``localcluster``: the embedded cluster's host process (a session of its own, so a terminal's
  Ctrl-C reaches only chainrt).
- ``command``: the flags every campaign command shares and the loop that runs one (progress,
  failures, Ctrl-C, exit codes).

docs/campaigns.md describes the folder, the engines, failure handling and cluster sizing.
"""
