"""Run the ordinary nodes of two_chains_nodes.py under chainrt.rclpy (policy fp, from the model)."""
from pathlib import Path

import rclpy
from chainrt.rclpy import ChainExecutor
from two_chains_nodes import make_nodes

rclpy.init()
executor = ChainExecutor(model=Path(__file__).parents[1] / "two_chains.yaml", stats_period=1.0)
for node in make_nodes():
    executor.add_node(node)
try:
    executor.spin()  # prints the per-chain report when it returns (Ctrl-C)
except KeyboardInterrupt:
    pass
