"""The load generator: settings -> schedule -> issue -> records -> results -> logs."""
