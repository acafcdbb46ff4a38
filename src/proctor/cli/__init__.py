"""Command line: a thin layer that parses arguments, calls the library and sets the exit status."""
