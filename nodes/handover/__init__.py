"""handover."""
