"""Wire formats both sides of a connection import: KServe V2 names and codecs, compression."""
