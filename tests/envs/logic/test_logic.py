"""Hand-computed verifier examples for the logic environments (logic*.py)."""

from __future__ import annotations

import pytest

from tests.envs.helpers import problem as _problem
from tests.envs.helpers import scored as _reward
from verirl.envs import get_env
from verirl.envs.logic.deduction import _consistent
from verirl.envs.logic.hanoi import hanoi_distance
from verirl.envs.logic.sudoku_queens import box_shape, constructive_queens, queens_ok

# ---- knights and knaves ------------------------------------------------------------------
# Alice: "Bob and I are of different kinds."  Bob: "Alice and I are of the same kind."
# Only Alice = knight, Bob = knave is consistent.
UNIQUE = {"names": ["Alice", "Bob"], "statements": [[0, ["diff", 0, 1]], [1, ["same", 1, 0]]]}


def test_knights_knaves_unique_solution_in_several_formats() -> None:
    p = _problem("knights_knaves", **UNIQUE)
    assert _reward("knights_knaves", p, "Alice: knight, Bob: knave") == (1.0, True)
    assert _reward("knights_knaves", p, "alice is a Knight; bob is a knave") == (1.0, True)


def test_knights_knaves_partial_invalid_and_unparsable() -> None:
    p = _problem("knights_knaves", **UNIQUE)
    # both knaves: Alice's lie holds (they are the same), Bob's "same" is true but he lies
    reward, correct = _reward("knights_knaves", p, "Alice: knave, Bob: knave")
    assert not correct and reward == pytest.approx(0.5**5)
    assert _reward("knights_knaves", p, "Alice: knight")[0] == -0.5  # Bob missing
    assert _reward("knights_knaves", p, "Alice: knight, Carol: knave")[0] == -0.5
    assert _reward("knights_knaves", p, "Alice: knight, Alice: knave, Bob: knave")[0] == -0.5
    assert _reward("knights_knaves", p, "nobody knows")[0] == -1.0


def test_knights_knaves_accepts_every_consistent_assignment() -> None:
    # Alice: "Bob is a knight."  Bob: "Alice is a knight."  Both knights or both knaves.
    p = _problem(
        "knights_knaves", names=["Alice", "Bob"], statements=[[0, ["is", 1, 1]], [1, ["is", 0, 1]]]
    )
    assert _reward("knights_knaves", p, "Alice: knight, Bob: knight") == (1.0, True)
    assert _reward("knights_knaves", p, "Alice: knave, Bob: knave") == (1.0, True)
    assert _reward("knights_knaves", p, "Alice: knight, Bob: knave")[0] == 0.0


def test_knights_knaves_generated_puzzles_are_unique_when_small() -> None:
    env = get_env("knights_knaves")
    for seed in range(5):
        problem = env.generate(6, seed)  # 4 islanders
        names = problem.data["names"]
        accepted = []
        for mask in range(1 << len(names)):
            text = ", ".join(
                f"{n}: {'knight' if mask >> i & 1 else 'knave'}" for i, n in enumerate(names)
            )
            if env.verify(problem, f"\\boxed{{{text}}}").correct:
                accepted.append(mask)
        assert len(accepted) == 1


# ---- boolean expressions -----------------------------------------------------------------
def test_boolean_eval() -> None:
    formulas = [
        ["and", ["var", "A"], ["var", "B"]],
        ["not", ["var", "B"]],
        ["xor", ["var", "A"], ["var", "B"]],
    ]
    p = _problem("boolean_eval", env={"A": 1, "B": 0}, formulas=formulas)
    assert _reward("boolean_eval", p, "0, 1, 1") == (1.0, True)
    assert _reward("boolean_eval", p, "false, true, true") == (1.0, True)
    reward, correct = _reward("boolean_eval", p, "1, 1, 1")  # 2 of 3 right
    assert not correct and reward == pytest.approx((2 / 3) ** 5)
    assert _reward("boolean_eval", p, "0, 1")[0] == -0.5
    assert _reward("boolean_eval", p, "maybe")[0] == -1.0


# ---- seating order -------------------------------------------------------------------------
def test_seating_order_accepts_any_order_meeting_the_clues() -> None:
    p = _problem(
        "seating_order", names=["Alice", "Bob", "Carol"], clues=[["left_of", 0, 1], ["end", 2]]
    )
    assert _reward("seating_order", p, "Alice, Bob, Carol") == (1.0, True)
    assert _reward("seating_order", p, "Carol, Alice, Bob") == (1.0, True)
    # Bob left of Alice breaks clue 1; Carol at an end keeps clue 2: 1/2
    reward, correct = _reward("seating_order", p, "Bob, Alice, Carol")
    assert not correct and reward == pytest.approx(0.5**5)
    assert _reward("seating_order", p, "Alice, Bob")[0] == -0.5
    assert _reward("seating_order", p, "Alice, Bob, Dave")[0] == -0.5
    assert _reward("seating_order", p, "Alice, Alice, Bob")[0] == -0.5


def test_seating_order_gap_and_adjacency_clues() -> None:
    p = _problem(
        "seating_order",
        names=["Alice", "Bob", "Carol", "Dave"],
        clues=[["gap", 0, 1, 2], ["adjacent", 2, 3], ["seat", 2, 2]],
    )
    assert _reward("seating_order", p, "Alice, Carol, Dave, Bob") == (1.0, True)
    assert _reward("seating_order", p, "Bob, Carol, Dave, Alice") == (1.0, True)
    reward, _ = _reward("seating_order", p, "Alice, Dave, Carol, Bob")  # Carol not in seat 2
    assert reward == pytest.approx((2 / 3) ** 5)


# ---- Tower of Hanoi ------------------------------------------------------------------------
def test_hanoi_distance_by_hand() -> None:
    assert hanoi_distance([0, 0, 0], 2) == 7  # the classic 2^3 - 1
    # disk 1 on C, disk 2 on A, disk 3 on C; goal C: 1 C->B, 2 A->C, 1 B->C
    assert hanoi_distance([2, 0, 2], 2) == 3
    assert hanoi_distance([2, 2], 2) == 0


def test_hanoi_min_moves_counts() -> None:
    p = _problem("hanoi_min_moves", pegs=[2, 0, 2], target=2)
    assert _reward("hanoi_min_moves", p, "3") == (1.0, True)
    assert _reward("hanoi_min_moves", p, "4")[0] == pytest.approx(0.75**10)
    assert get_env("hanoi_min_moves").solve(p) == "3"  # breadth-first search agrees


def test_hanoi_moves_simulation() -> None:
    p = _problem("hanoi_moves", pegs=[0, 0], target=2)  # two disks on A, goal C
    assert _reward("hanoi_moves", p, "A->B, A->C, B->C") == (1.0, True)
    assert _reward("hanoi_moves", p, "A to B, A to C, B to C") == (1.0, True)
    longer = "A->C, C->B, A->C, B->A, A->C"  # legal, 5 moves where 3 suffice
    reward, correct = _reward("hanoi_moves", p, longer)
    assert not correct and reward == pytest.approx((3 / 5) ** 5)
    # legal but unfinished: disk 2 on C, disk 1 elsewhere -> 0.5 * (1/2)^5
    assert _reward("hanoi_moves", p, "A->B, A->C")[0] == pytest.approx(0.5 * 0.5**5)
    assert _reward("hanoi_moves", p, "A->C, A->C")[0] == -0.5  # big disk onto small one
    assert _reward("hanoi_moves", p, "B->C")[0] == -0.5  # empty peg
    assert _reward("hanoi_moves", p, "AB AC BC")[0] == -1.0


# ---- Sudoku --------------------------------------------------------------------------------
SOLUTION_A = [[1, 2, 3, 4], [3, 4, 1, 2], [2, 1, 4, 3], [4, 3, 2, 1]]
# blanking (0,0), (0,1), (2,0), (2,1) leaves two completions: 1 2 / 2 1 and 2 1 / 1 2
PUZZLE = [[0, 0, 3, 4], [3, 4, 1, 2], [0, 0, 4, 3], [4, 3, 2, 1]]


def _grid(rows: list[list[int]]) -> str:
    return "; ".join(" ".join(map(str, r)) for r in rows)


def test_sudoku_accepts_both_completions() -> None:
    p = _problem("sudoku", r=2, c=2, puzzle=PUZZLE)
    other = [[2, 1, 3, 4], [3, 4, 1, 2], [1, 2, 4, 3], [4, 3, 2, 1]]
    assert _reward("sudoku", p, _grid(SOLUTION_A)) == (1.0, True)
    assert _reward("sudoku", p, _grid(other)) == (1.0, True)
    assert _reward("sudoku", p, "2134\n3412\n1243\n4321") == (1.0, True)


def test_sudoku_partial_and_invalid() -> None:
    p = _problem("sudoku", r=2, c=2, puzzle=PUZZLE)
    # rows fine, but columns 1 and 2 repeat a number: 10 of 12 units
    broken = [[1, 2, 3, 4], [3, 4, 1, 2], [1, 2, 4, 3], [4, 3, 2, 1]]
    reward, correct = _reward("sudoku", p, _grid(broken))
    assert not correct and reward == pytest.approx((10 / 12) ** 5)
    changed = [[1, 2, 4, 3], [3, 4, 1, 2], [2, 1, 3, 4], [4, 3, 2, 1]]
    assert _reward("sudoku", p, _grid(changed))[0] == -0.5  # a given was changed
    assert _reward("sudoku", p, _grid(SOLUTION_A[:3]))[0] == -0.5
    assert _reward("sudoku", p, _grid([[5, 2, 3, 4], *SOLUTION_A[1:]]))[0] == -0.5
    assert _reward("sudoku", p, "one two three")[0] == -1.0


def test_sudoku_answer_is_the_empty_cells_only() -> None:
    """The answer lists the deduced cells, not a transcription of the givens: its length
    is the number of empty cells, whose share grows with the level."""
    p = _problem("sudoku", r=2, c=2, puzzle=PUZZLE)
    assert _reward("sudoku", p, "1 2 2 1") == (1.0, True)
    assert _reward("sudoku", p, "2, 1, 1, 2") == (1.0, True)
    assert _reward("sudoku", p, "1 2 1 2")[1] is False  # a column repeats a number
    assert _reward("sudoku", p, "1 2 2")[0] == -0.5  # one number short
    env = get_env("sudoku")
    shares = []
    for d in (0, 8, 20):
        problem = env.generate(d, 0)
        n = problem.data["r"] * problem.data["c"]
        empty = sum(1 for row in problem.data["puzzle"] for v in row if not v)
        assert len(problem.answer.split()) == empty
        shares.append(empty / (n * n))
    assert shares[0] < shares[2]


def test_sudoku_box_shapes_grow() -> None:
    assert [box_shape(d) for d in (0, 4, 8, 12, 16)] == [(2, 2), (2, 3), (3, 3), (3, 4), (4, 4)]
    env = get_env("sudoku")
    for d in (4, 9):
        problem = env.generate(d, 0)
        assert env.verify(problem, f"\\boxed{{{env.solve(problem)}}}").correct


# ---- N-queens ------------------------------------------------------------------------------
def test_n_queens_any_placement_and_fixed_queens() -> None:
    free = _problem("n_queens", n=4, fixed=[])
    assert _reward("n_queens", free, "2, 4, 1, 3") == (1.0, True)
    assert _reward("n_queens", free, "3, 1, 4, 2") == (1.0, True)
    assert _reward("n_queens", free, "1, 2, 3, 4")[0] == 0.0  # all on one diagonal
    pinned = _problem("n_queens", n=4, fixed=[[0, 1]])  # a queen at row 1, column 2
    assert _reward("n_queens", pinned, "2, 4, 1, 3") == (1.0, True)
    reward, correct = _reward("n_queens", pinned, "3, 1, 4, 2")  # 6 pairs fine, fixed missed
    assert not correct and reward == pytest.approx((6 / 7) ** 5)
    assert _reward("n_queens", free, "1, 1, 1")[0] == -0.5
    assert _reward("n_queens", free, "5, 1, 2, 3")[0] == -0.5


def test_constructive_queens_is_valid_for_many_sizes() -> None:
    for n in range(4, 60):
        cols = constructive_queens(n)
        assert sorted(cols) == list(range(n)) and queens_ok(cols), n


def test_knights_knaves_has_exactly_one_consistent_assignment() -> None:
    """The prompt says "determine who is a knight": 19 of 300 puzzles at d = 2 once had two
    consistent assignments. Brute force over all 2^n assignments, and count_answers agrees."""
    env = get_env("knights_knaves")
    assert env.unique_answer
    for difficulty in (0, 1, 2, 3, 7):
        for seed in range(300 if difficulty == 2 else 60):
            p = env.generate(difficulty, seed)
            n, stmts = len(p.data["names"]), p.data["statements"]
            brute = sum(_consistent(stmts, mask) for mask in range(1 << n))
            assert brute == 1 == env.count_answers(p), (difficulty, seed, brute)
    # Alice: "Bob is a knight" (A = B) alone has two solutions; count_answers sees both.
    two = _problem("knights_knaves", names=["Alice", "Bob"], statements=[[0, ["is", 1, 1]]])
    assert env.count_answers(two, limit=5) == 2
