"""chainrt: priority-driven, chain-aware real-time scheduling for ROS 2.

The C++ core (model, analysis, simulator) is the extension module ``chainrt._core``; this
package adds the command line (``chainrt``), experiments and plots on top of it.
"""

import os as _os
import sys as _sys


# Ctrl-C on the command line (cli.main): while the command is still starting (importing), the
# process ends quietly with exit 130; once main() runs, Ctrl-C is a KeyboardInterrupt that main()
# turns into exit 130 (commands with something to undo catch it first). The interrupt is also
# remembered: CPython swallows a KeyboardInterrupt raised inside a weakref callback or __del__
# ("Exception ignored in ..."), and main() checks the flag so that such an interrupt still ends
# the command instead of letting it run to the end.
_cli_interrupt_state = {"main": False, "interrupted": False}


def _cli_interrupt(_signum, _frame):
    _cli_interrupt_state["interrupted"] = True
    if _cli_interrupt_state["main"]:
        raise KeyboardInterrupt
    try:
        _sys.stderr.write("chainrt: interrupted\n")
        _sys.stderr.flush()
    except (OSError, ValueError):
        pass
    _os._exit(130)


# Only when this import is the start of a chainrt command line (the `chainrt` script, or
# `python -m chainrt...` while the module is being found); a program that imports chainrt keeps
# its own SIGINT handling.
if _sys.argv and (_sys.argv[0] == "-m" or _os.path.basename(_sys.argv[0]) == "chainrt"):
    import _signal  # the interpreter's built-in module (signal.py would take ms to import)

    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _cli_interrupt)

# A source checkout's extension modules (chainrt._core, chainrt._rclpy_exec) are in the build
# of this virtualenv's ROS 2 line (_build.py), searched before the package's own folder.
from . import _build

_ext = _build.extension_dir()
if _ext is not None:
    __path__.insert(0, str(_ext))
del _ext

try:
    from .model import Model, ModelError, load_model, load_model_from_string, validate
except ImportError as _err:
    # no C++ core: this virtualenv's build is missing or failed (scripts/setup builds it)
    if "_core" not in str(_err):
        raise
    _where = _build.extension_dir()
    _msg = (f"chainrt: the C++ core is not built{f' (no _core module in {_where})' if _where else ''}; "
            "run scripts/setup")
    if _sys.argv and _os.path.basename(_sys.argv[0]) == "chainrt":
        raise SystemExit(_msg) from None  # the command line: one line, exit status 1
    raise ImportError(_msg) from None

__all__ = ["Model", "ModelError", "load_model", "load_model_from_string", "validate"]
