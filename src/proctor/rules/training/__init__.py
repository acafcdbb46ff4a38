"""Training rules as data: one table module per ruleset (ruleset_X_Y_Z.py), shared types, cadences."""
