"""What the tests and the benchmarks both use: the alignment questions and their truth,
the NumPy reference encoder, and network stand-ins. Not part of the package: nothing
under src/ imports it."""
