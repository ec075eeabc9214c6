//! Chunk messages (placeholder; being written).
