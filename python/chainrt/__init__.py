"""chainrt: priority-driven, chain-aware real-time scheduling for ROS 2.

The C++ core (model, analysis, simulator) is the extension module ``chainrt._core``; this
package adds the command line (``chainrt``), experiments and plots on top of it.
"""

from .model import Model, ModelError, load_model, load_model_from_string, validate

__all__ = ["Model", "ModelError", "load_model", "load_model_from_string", "validate"]
