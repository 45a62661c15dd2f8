"""Games: impartial games, two-player games, splitting games and move puzzles."""
