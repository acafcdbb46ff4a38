"""Assembling and preparing an inference submission tree (truncation, packaging)."""
