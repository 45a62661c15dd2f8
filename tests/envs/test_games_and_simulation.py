"""Games (games_two_player.py), process simulations (simulation_processes.py) and integer
division (arithmetic_division.py): hand-computed instances, the fast rules against
game-tree search and literal simulation, and the self-check."""

from __future__ import annotations

import random

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import ENVIRONMENTS, env_names, get_env
from verirl.envs.selfcheck import self_check

NAMES = [
    *(
        n
        for n in env_names(family="games")
        if ENVIRONMENTS.get(n).part.__module__.endswith(".games.two_player")
    ),
    *(
        n
        for n in env_names(family="simulation")
        if ENVIRONMENTS.get(n).part.__module__.endswith(".simulation.processes")
    ),
    "division",
]


def _solved(name: str, **data: object) -> str:
    return get_env(name).solve(problem(name, **data))


def test_families_are_registered() -> None:
    assert len(NAMES) == 10


def test_euclid_game() -> None:
    assert verdict("euclid_game", "Stan", a=25, b=7).correct  # 25 ≥ 2·7: Stan wins at once
    # (5, 3) → (3, 2) → (2, 1), which Stan finishes; from (3, 2) Ollie is the one to finish
    assert verdict("euclid_game", "stan wins", a=5, b=3).correct
    assert verdict("euclid_game", "\\text{Ollie}", a=3, b=2).correct
    assert reward("euclid_game", "Stan", a=3, b=2) == 0.0
    assert reward("euclid_game", "Stan or Ollie", a=3, b=2) == -1.0
    assert _solved("euclid_game", a=3, b=2) == "Ollie"
    for a in range(1, 40):
        for b in range(1, 40):
            assert verdict("euclid_game", _solved("euclid_game", a=a, b=b), a=a, b=b).correct


def test_gra_minima_game() -> None:
    # Alice takes {3}; Bob's best from {1, 1} is to take both: 3 - 1 = 2
    assert verdict("gra_minima_game", "2", numbers=[1, 3, 1]).correct
    assert verdict("gra_minima_game", "5", numbers=[5]).correct
    assert verdict("gra_minima_game", "2", numbers=[2, 2]).correct
    assert reward("gra_minima_game", "3", numbers=[1, 3, 1]) == 0.0
    rng = random.Random(3)
    for _ in range(40):
        numbers = [rng.randint(1, 9) for _ in range(rng.randint(1, 6))]
        best = _solved("gra_minima_game", numbers=numbers)
        assert verdict("gra_minima_game", best, numbers=numbers).correct, numbers


def test_ab_program_simulation() -> None:
    # B# A# #B #A → B# #B A# #A → A# #A → nothing
    assert verdict("ab_program_simulation", "empty", program=["B#", "A#", "#B", "#A"]).correct
    prog = ["#A", "B#", "#A", "A#"]
    assert verdict("ab_program_simulation", "#A #A B# A#", program=prog).correct
    assert verdict("ab_program_simulation", "\\#A, \\#A, B\\#, A\\#", program=prog).correct
    assert reward("ab_program_simulation", "#A B# #A A#", program=prog) == 0.0
    assert reward("ab_program_simulation", "#A #C", program=prog) == -0.5
    # the result does not depend on the rewriting order
    rules = {("A#", "#A"): [], ("B#", "#B"): [], ("A#", "#B"): ["#B", "A#"]}
    rules[("B#", "#A")] = ["#A", "B#"]
    rng = random.Random(1)
    for _ in range(60):
        program = [rng.choice(["A#", "#A", "B#", "#B"]) for _ in range(rng.randint(1, 12))]
        tokens = list(program)
        while True:
            spots = [i for i in range(len(tokens) - 1) if (tokens[i], tokens[i + 1]) in rules]
            if not spots:
                break
            i = rng.choice(spots)
            tokens[i : i + 2] = rules[(tokens[i], tokens[i + 1])]
        final = " ".join(tokens) if tokens else "empty"
        assert verdict("ab_program_simulation", final, program=program).correct, program


def test_josephus() -> None:
    assert verdict("josephus", "2, 4, 1, 5, 3", n=5, k=2).correct
    assert reward("josephus", "2, 4, 1, 3, 5", n=5, k=2) == pytest.approx(0.6**10)
    assert reward("josephus", "2, 4, 1, 5", n=5, k=2) == -0.5
    assert reward("josephus", "2, 4, 1, 5, 5", n=5, k=2) == -0.5
    assert _solved("josephus", n=5, k=2) == "2, 4, 1, 5, 3"
    assert _solved("josephus", n=4, k=1) == "1, 2, 3, 4"


def test_fibtrain() -> None:
    # NOIP 1998 sample: a = 5, 7 stations, 32 at the end (x = 3) → 13 after station 4
    data = {"n": 7, "a": 5, "m": 32, "station": 4}
    assert verdict("fibtrain", "13", **data).correct
    assert int(_solved("fibtrain", **data)) == 13
    assert reward("fibtrain", "12", **data) == 0.0


def test_cow_dance_show() -> None:
    times = [4, 3, 2, 1]  # finish times: K=1 → 10, K=2 → 5, K=3 → 4, K=4 → 4
    assert verdict("cow_dance_show", "2", times=times, limit=5).correct
    assert verdict("cow_dance_show", "3", times=times, limit=4).correct
    assert verdict("cow_dance_show", "1", times=times, limit=10).correct
    assert reward("cow_dance_show", "3", times=times, limit=5) == 0.0
    assert int(_solved("cow_dance_show", times=times, limit=4)) == 3


def test_fbi_binary_tree() -> None:
    assert verdict("fbi_binary_tree", "IBF", s="10").correct
    assert verdict("fbi_binary_tree", "IIIIIII", s="1111").correct
    assert verdict("fbi_binary_tree", "BIFIBFF", s="0110").correct
    assert verdict("fbi_binary_tree", "b i f i b f f", s="0110").correct
    assert reward("fbi_binary_tree", "BIFIBFB", s="0110") == pytest.approx((6 / 7) ** 5)
    assert reward("fbi_binary_tree", "BIFIBF", s="0110") == -0.5
    assert reward("fbi_binary_tree", "BIFIBFX", s="0110") == -0.5
    assert _solved("fbi_binary_tree", s="0110") == "BIFIBFF"


def test_bucket_sorting_and_division() -> None:
    assert verdict("bucket_sorting", "2", array=[1, 2, 2, 3]).correct
    assert reward("bucket_sorting", "3", array=[1, 2, 2, 3]) == 0.0
    assert verdict("division", "14", a=100, b=7).correct
    assert verdict("division", "14.", a=100, b=7).correct
    assert reward("division", "15", a=100, b=7) == 0.0
    assert reward("division", "14, 2", a=100, b=7) == -0.5  # two numbers
    assert int(_solved("division", a=987654321, b=123)) == 987654321 // 123


def test_face_right_way() -> None:
    # BFB: K = 1 and K = 2 both need 2 operations, K = 3 cannot fix it → (1, 2)
    assert verdict("face_right_way", "1, 2", cows="BFB").correct
    assert verdict("face_right_way", "K = 1, M = 2", cows="BFB").correct
    assert reward("face_right_way", "2, 2", cows="BFB") == pytest.approx(0.5**5)
    assert reward("face_right_way", "1, 3", cows="BFB") == 0.0  # K = 1 needs 2, not 3
    assert reward("face_right_way", "3, 1", cows="BFB") == 0.0  # K = 3 cannot do it
    assert reward("face_right_way", "4, 1", cows="BFB") == -0.5
    # BBB: K = 3 once; K = 1 thrice scores ((1+1)/(3+1))^5 · (1/3)^5
    assert reward("face_right_way", "1, 3", cows="BBB") == pytest.approx(0.5**5 * (1 / 3) ** 5)
    assert _solved("face_right_way", cows="BFB") == "1, 2"


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures
