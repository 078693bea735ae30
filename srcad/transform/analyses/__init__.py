"""Read-only analyses over normalized code."""
