"""The one error contract of the lab: every error a reader or a CLI user can cause derives from LabError.

`LabError(message, reason, **details)`: str(e) is the English line the CLI prints; `reason` is a code
and `details` the values a page needs to write the same message in its reader's language (one table
for every error: ui/messages.py). Each subclass names its reasons and their details in its docstring.
"""

from __future__ import annotations


class LabError(ValueError):
    """A problem with the input or the environment: one English line, a reason code and its details."""

    reason_default = ""

    def __init__(self, message: str, reason: str = "", **details):
        super().__init__(message)
        self.reason, self.details = reason or self.reason_default, details
