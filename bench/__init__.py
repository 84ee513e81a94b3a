"""The benchmarks: each a module run as `python -m bench.NAME` from the checkout's root
(`make bench` runs the set a round reruns). Shared helpers live in harness/."""
