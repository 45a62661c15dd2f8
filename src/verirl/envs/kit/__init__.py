"""What environment families share: helpers that register no environment (size ladder,
wording, ...). A family imports only ``base``, ``reading``, ``kit`` and its own category."""
