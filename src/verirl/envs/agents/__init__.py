"""Agent environments: multi-turn worlds where the model calls tools."""
