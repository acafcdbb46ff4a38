"""Test and bench tooling: synthetic training logs, stand-in submissions, tiny third-party models.
Kept out of the package because nothing in proctor itself uses them."""
