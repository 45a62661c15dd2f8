"""Formal proofs: Coq and Lean theorem proving checked by the proof assistant."""
