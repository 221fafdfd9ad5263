"""briefing."""
