//! Dolt tuples (placeholder; being written).
