"""Code only the benchmarks run (the answer benchmark, dev-set checks): outside the product package."""
