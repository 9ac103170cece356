"""The papers' experiments, run on the C++ analyses:

- :mod:`.schedulability` — Fig. 7 of the EDF ready-queue paper (Sec. VI-C): schedulability
  ratio of generated systems while one of U_norm, n, b, g, α varies;
- :mod:`.predictability` — CROS-RT's predictability metric: the bound on WCRT − BCRT of the
  highest-priority chain as the number of UUniFast chains grows.
"""
