"""Free-form answers: units, fractions, number words, dates, sets and expressions."""
