"""Sub-commands of the ``chainrt`` CLI, one module each (see chainrt.cli)."""
