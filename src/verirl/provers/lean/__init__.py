"""The Lean 4 backend: comment/string masking, safety filters, axiom audits, REPL replies, the
leanprover-community/repl checker and the Kimina server client, and the Lean theorem loader."""
