"""The wire protocol: typed, versioned MessagePack messages and their codec (sans-I/O)."""
