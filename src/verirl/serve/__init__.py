"""The environment server: ``verirl serve`` (OpenEnv protocol) with server-side curricula."""
