"""An environment's family is the module that defines it, and the old family names.

A family is named by its path: the environments of ``src/verirl/envs/graphs/walks.py`` form the
family ``graphs/walks`` (``<category>/<module>``), so the file that holds an environment is
always its family's name. An environment defined outside ``verirl.envs`` (a plugin) may set
``family`` itself; if it does not, its family is its module's dotted path with ``/``.

The hand-typed names families had before (``graph_optimization``, ``code_lists``, ...) stay
accepted wherever a family is named: :data:`FAMILY_ALIASES` maps each to the modules that held
its environments, so ``--family graph_optimization`` selects what it always did.

This module imports nothing from ``verirl.envs`` (``base`` imports it).
"""

from __future__ import annotations

PACKAGE = "verirl.envs"

FAMILY_ALIASES: dict[str, tuple[str, ...]] = {
    "agents": ("agents/tool_world",),
    "arithmetic": ("arithmetic/division", "arithmetic/operations"),
    "array_construction": ("arrays/assignments",),
    "arrays": ("arrays/partitions", "arrays/placements", "arrays/subsequences"),
    "arrays_scans": ("arrays/scans",),
    "bits_counting": ("bits/counting",),
    "code_dp": ("code/dynamic_programming",),
    "code_lists": ("code/lists",),
    "code_numbers": ("code/numbers",),
    "code_simulation": ("code/simulation",),
    "code_strings": ("code/strings",),
    "combinatorics": ("counting/combinatorics",),
    "congruences": ("number_theory/congruences",),
    "constraint_systems": ("logic/difference_constraints",),
    "constructions_sequences": ("number_theory/constructions",),
    "countdown": ("arithmetic/countdown",),
    "counting": ("counting/constrained",),
    "counting_arrays": ("counting/arrays",),
    "counting_grids": ("counting/grids",),
    "counting_operations": ("counting/operations",),
    "digits_orders": ("number_theory/digits_orders",),
    "dp_optimization": ("optimization/dynamic_programming",),
    "freeform": ("freeform/conversions", "freeform/dates_sets", "freeform/expressions"),
    "games": ("games/two_player",),
    "games_impartial": ("games/impartial",),
    "games_splitting": ("games/splitting",),
    "geometry": ("geometry/convex_hull", "geometry/points"),
    "geometry_lattice": ("geometry/lattice",),
    "graph_construction": ("graphs/construction",),
    "graph_counting": ("graphs/counting",),
    "graph_optimization": (
        "graphs/colourings",
        "graphs/covers_flows",
        "graphs/steiner_flow",
        "graphs/trees_paths",
    ),
    "graphs": ("graphs/paths_spanning", "graphs/structure"),
    "graphs_distances": ("graphs/distances",),
    "graphs_selection": ("graphs/selection",),
    "graphs_walks": ("graphs/walks",),
    "grid_puzzles": (
        "grids/logic_puzzles",
        "grids/optimization",
        "grids/puzzles",
        "grids/selection",
    ),
    "grid_search": ("grids/search",),
    "grid_tilings": ("counting/grid_tilings",),
    "intervals": ("arrays/interval_addition", "arrays/interval_scheduling"),
    "letter_puzzles": ("logic/letter_puzzles",),
    "linear_algebra": ("algebra/linear",),
    "logic": ("logic/deduction", "logic/hanoi", "logic/sudoku_queens"),
    "logic_constraints": ("logic/constraints",),
    "matrices": ("algebra/matrices",),
    "np_complete": ("graphs/np_complete", "optimization/np_complete"),
    "number_counting": ("counting/number_theory",),
    "number_theory": ("number_theory/elementary",),
    "number_theory_powers": ("number_theory/powers",),
    "number_theory_sums": ("number_theory/sums",),
    "numbers": ("number_theory/extremal", "number_theory/representations"),
    "numeric_exact": ("arithmetic/exact_numbers",),
    "optimization": ("optimization/choices",),
    "permutation_counting": ("counting/permutations",),
    "proofs": ("proofs/coq", "proofs/coq_generated", "proofs/lean"),
    "puzzles_moves": ("games/move_puzzles",),
    "puzzles_placement": ("grids/placement_puzzles",),
    "recurrence_counting": ("counting/recurrences",),
    "scheduling_orders": ("optimization/scheduling",),
    "sequence_counting": ("counting/sequences",),
    "sequences_dp": ("algebra/sequences",),
    "simulation": ("simulation/processes",),
    "sorting_searching": ("arrays/sorting",),
    "string_counting": ("counting/strings",),
    "string_search": ("strings/search",),
    "strings": ("strings/basics",),
    "strings_runs": ("strings/runs",),
    "symbolic": ("algebra/calculus", "algebra/polynomials"),
    "trees_choices": ("graphs/tree_choices",),
    "trees_counting": ("graphs/tree_counting",),
    "xor": ("bits/xor",),
}
"""Old family name → the module families that hold exactly its environments."""


def module_family(module: str) -> str | None:
    """``<category>/<module>`` for a module ``verirl.envs.<category>.<module>``; None for any
    other module (the protocol, ``reading``, ``kit``, a plugin)."""
    parts = module.split(".")
    if len(parts) != 4 or ".".join(parts[:2]) != PACKAGE:
        return None
    return f"{parts[2]}/{parts[3]}"


def path_family(module: str) -> str:
    """The family an environment defined in ``module`` gets when it names none: its module
    family, else (outside the category packages) the dotted path with ``/``."""
    return module_family(module) or module.replace(".", "/")


def family_members(name: str) -> frozenset[str]:
    """The families ``name`` selects: itself, plus the modules it stands for when it is an
    old family name (:data:`FAMILY_ALIASES`)."""
    return frozenset((name, *FAMILY_ALIASES.get(name, ())))


def old_family_name(family: str) -> str | None:
    """The old name whose environments include those of ``family`` (None: a family that
    came after the old names, or a plugin's)."""
    for old, modules in FAMILY_ALIASES.items():
        if family in modules:
            return old
    return None
