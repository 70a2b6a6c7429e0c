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


class ExtensionMissingError(ImportError):
    """The compiled extension ``dcnsim._core`` cannot be imported."""
