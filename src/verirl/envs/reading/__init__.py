"""Reading a model's answer: extraction (``\\boxed{}``, tags, fenced blocks), answer formats,
value-preserving normalisation, surface forms and the symbolic expression parser. Registers
no environment."""
