"""Number theory: divisibility, congruences, powers, sums, digits, representations."""
