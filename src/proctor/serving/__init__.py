"""Servers proctor runs itself, so remote SUT paths have a real, known system to drive."""
