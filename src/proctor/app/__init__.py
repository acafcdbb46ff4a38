"""The application layer: whole jobs built from the engine, the workloads and the checkers."""
