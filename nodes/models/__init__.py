"""Chat models: resolving the model each agent uses, and the built-in offline model."""
