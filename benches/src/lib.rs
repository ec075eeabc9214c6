//! Shared helpers for the benchmarks (fixtures, baselines).
