"""Servers and wire protocols: proctor systems under test served over the network."""
