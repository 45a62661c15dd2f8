"""Logic: deduction, constraints, Sudoku and queens, Hanoi, letter puzzles."""
