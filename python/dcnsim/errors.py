"""Exceptions of the Python layer.

Scenario mistakes found by the engine or by this package raise the engine's
``ScenarioError`` (``dcnsim.ScenarioError``); the classes here cover the rest.
"""

from __future__ import annotations


class DcnsimError(Exception):
    """Base class of the errors raised by the Python layer of dcnsim."""


class UserError(DcnsimError):
    """A mistake in what the user asked for (arguments, ids, output paths).

    The command line prints the message and exits with status 2.
    """


class CheckFailed(DcnsimError):
    """A run's self-checks (``dcnsim run --check``) found a violation: packet conservation
    or a buffer bound at a port, or a flow's sequence order. The command line prints the
    message and exits with status 1."""


class RunFailed(DcnsimError):
    """A run could not finish: memory ran out (an address-space limit such as ``ulimit
    -v``, or other processes). What was computed is written first; the command line
    prints the message and exits with status 1."""


class ExtensionMissingError(ImportError):
    """The compiled extension ``dcnsim._core`` cannot be imported."""


def missing_extra(what: str, extra: str, exc: ImportError) -> UserError:
    """The one-line error for an optional dependency that is not installed."""
    name = exc.name or str(exc)
    return UserError(f"{what} needs {name}, which is not installed: "
                     f"pip install 'dcnsim[{extra}]'")


def missing_dependency(what: str, exc: ImportError) -> UserError:
    """The one-line error for a dependency of dcnsim that is missing all the same (an
    install made with ``--no-deps``, or the package removed since)."""
    name = (exc.name or str(exc)).partition(".")[0]
    return UserError(f"{what} needs {name}, which is not installed (a dependency of dcnsim: "
                     f"pip install {name})")
