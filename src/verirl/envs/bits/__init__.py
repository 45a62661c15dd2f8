"""Bits: bit counting and XOR problems."""
