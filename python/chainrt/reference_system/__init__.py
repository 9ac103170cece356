"""The Autoware reference system benchmark (ROS 2 Real-Time Working Group, v1.1.0) on chainrt.

Facts: shared/reference/autoware-reference-system.md. The topology is the model file
``examples/autoware_reference.yaml``; the C++ workload (bench/reference_system/) builds its
nodes from it, so analysis, simulation and the real run read the same graph.

Modules:
 - :mod:`.message`  the 4096-byte sample layout (size, stats[63], data[7]) and the sink dump;
 - :mod:`.kpi`      the KPIs exactly as upstream computes them (hot-path latency and drops,
                    behaviour-planner period/jitter), Welford statistics, warm-up;
 - :mod:`.topology` node types derived from the model, the hot path, its latency floor, the
                    CPU demand of a load and the stressed-load scale;
 - :mod:`.configs`  the compared executor configurations as model variants;
 - :mod:`.runner`   runs configurations on real ROS 2, the simulator and the analysis;
 - :mod:`.report`   table, JSON, CSV, summary plots, latency CDF and the HTML page.
"""
