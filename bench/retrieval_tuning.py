"""Choose fusion settings by leave-one-conversation-out cross-validation over a grid.

The settings are the fields of apps.search.fusion.FusionWeights that exist when the benchmark
runs (dataclasses.fields), each with a grid of values from GRID (fields it does not know keep
their default; the default value is always one of the choices). bench/retrieval.py hands in a
function that searches every question at one point of the grid and returns each question's
metrics; points are cached, so each is searched once, and the folds are computed from those
per-question results:

- for each conversation held out, the best point on the other conversations' questions (mean
  recall@10 by default, or nDCG@10; ties go to the higher nDCG@10 / recall@10, then to the point
  reached first, so the defaults win a tie) is evaluated on the held-out questions; the
  cross-validated figure pools those held-out results;
- the in-sample best is the same choice made on every question;
- the most-often-chosen value of each field over the folds is the suggested default.

The full product of the grids is too large to search (hundreds of points once the conversation
ranking fields exist), so each choice is made by coordinate ascent over the grid: from the
defaults, try every value of one field with the others held, keep the best, go on to the next
field, and repeat until a round changes nothing (at most ROUNDS rounds).
"""

from collections import Counter
from collections.abc import Callable
from dataclasses import fields

# Values to try per known FusionWeights field. Shares and boosts include 0 (the step off).
GRID: dict[str, tuple] = {
    "lexical": (0.25, 0.5, 1.0, 2.0, 4.0),
    "vector": (0.5, 1.0, 2.0),
    "recency": (0.0, 0.05, 0.2),
    "half_life_days": (7.0, 30.0, 90.0),
    "k": (5, 20, 60),
    "neighbour_share": (0.0, 0.1, 0.25, 0.5),
    "session_share": (0.0, 0.1, 0.25, 0.4),
    "session_gap_minutes": (15, 30, 120),
    "session_follow": (1, 4, 8, 12, 16),
    "normalized_kinds": (frozenset(), frozenset({"message"})),
    "normalized_lexical": (0.25, 0.5, 1.0, 2.0),
    "normalized_vector": (0.5, 1.0, 2.0, 4.0),
    "temporal_boost": (0.0, 0.25, 0.5, 1.0),
}
# Fields that only act when both signals are searched: not tuned for lexical-only search.
FUSED_ONLY = frozenset({"vector", "normalized_kinds", "normalized_vector"})
ROUNDS = 3
SELECT_BY = ("R@10", "nDCG@10")

Point = tuple[tuple[str, object], ...]  # sorted (field, value) pairs: hashable, printable


def tuned_grid(weights, signals: tuple[str, ...], quick: bool = False) -> dict[str, list]:
    """Return {field: values} for the FusionWeights fields that exist and have a grid.

    weights is the default FusionWeights; its value of each field is always a choice, first.
    quick keeps the default and one other value per field.
    """
    grid = {}
    for spec in fields(weights):
        values = GRID.get(spec.name)
        if values is None or (spec.name in FUSED_ONLY and "vector" not in signals):
            continue
        default = getattr(weights, spec.name)
        choices = [default] + [value for value in values if value != default]
        grid[spec.name] = choices[:2] if quick else choices
    return grid


def point_of(values: dict) -> Point:
    return tuple(sorted(values.items()))


def jsonable(value):
    """A grid value as JSON: frozensets become sorted lists."""
    return sorted(value) if isinstance(value, frozenset) else value


def point_json(point: Point) -> dict:
    return {name: jsonable(value) for name, value in point}


class Tuner:
    """Searches each grid point once (through evaluate_point) and chooses points per fold.

    evaluate_point(values: dict) -> {question id: {metric: value}}; conversations maps each
    question id to its conversation.
    """

    def __init__(
        self,
        evaluate_point: Callable[[dict], dict],
        grid: dict[str, list],
        conversations: dict[str, str],
        select_by: str = "R@10",
    ):
        self.evaluate_point, self.grid, self.select_by = evaluate_point, grid, select_by
        self.conversations = conversations
        self.cache: dict[Point, dict] = {}
        self.default = point_of({name: values[0] for name, values in grid.items()})

    def results(self, point: Point) -> dict:
        """Return the per-question metrics at a point, searching only the first time."""
        if point not in self.cache:
            self.cache[point] = self.evaluate_point(dict(point))
        return self.cache[point]

    def objective(self, point: Point, questions: list[str]) -> tuple[float, float]:
        """Mean of the selection metric, then of the tie-breaking one, over the questions."""
        found = self.results(point)
        other = SELECT_BY[1] if self.select_by == SELECT_BY[0] else SELECT_BY[0]
        return tuple(
            sum(found[q][metric] for q in questions) / len(questions)
            for metric in (self.select_by, other)
        )

    def choose(self, questions: list[str]) -> Point:
        """Return the best point on these questions, by coordinate ascent from the defaults."""
        current = dict(self.default)
        best = self.objective(self.default, questions)
        for _ in range(ROUNDS):
            changed = False
            for name, values in self.grid.items():
                for value in values:
                    if value == current[name]:
                        continue
                    trial = point_of({**current, name: value})
                    score = self.objective(trial, questions)
                    if score > best:
                        best, current, changed = score, dict(trial), True
            if not changed:
                break
        return point_of(current)

    def cross_validate(self) -> dict:
        """Return the folds, the held-out result of every question, in-sample best and modes."""
        everything = list(self.conversations)
        held_out_rows: dict[str, dict] = {}
        folds = []
        for held in sorted(set(self.conversations.values())):
            train = [q for q in everything if self.conversations[q] != held]
            test = [q for q in everything if self.conversations[q] == held]
            chosen = self.choose(train)
            found = self.results(chosen)
            held_out_rows.update({q: found[q] for q in test})
            train_score, _ = self.objective(chosen, train)
            test_score, _ = self.objective(chosen, test)
            folds.append(
                {
                    "held_out": held,
                    "values": point_json(chosen),
                    "train": round(train_score, 4),  # the select_by metric's mean
                    "test": round(test_score, 4),
                    "point": chosen,
                }
            )
        in_sample = self.choose(everything)
        return {
            "select_by": self.select_by,
            "grid": {name: [jsonable(v) for v in values] for name, values in self.grid.items()},
            "folds": folds,
            "held_out_rows": held_out_rows,
            "in_sample": in_sample,
            "most_chosen": most_chosen([fold["point"] for fold in folds], self.default),
            "points_searched": len(self.cache),
        }


def most_chosen(points: list[Point], default: Point) -> dict:
    """Return each field's value chosen by the most folds; a tie goes to the default value."""
    defaults = dict(default)
    found = {}
    for name in defaults:
        counts = Counter(dict(point)[name] for point in points)
        top = max(counts.values())
        tied = [value for value, count in counts.items() if count == top]
        found[name] = defaults[name] if defaults[name] in tied else tied[0]
    return found
