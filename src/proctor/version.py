"""proctor's version, in a module of its own so the CLI and the servers read it without the facade."""

from __future__ import annotations

__version__ = "0.1.0"
