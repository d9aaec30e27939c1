"""Least squares on the probability simplex, for many small problems at once.

``min ||y - A x||²`` subject to ``x >= 0`` and ``sum(x) = 1``, for a stack of
problems with at most three unknowns (the label classes). The problem is convex,
so its solution is the equality-constrained optimum of some face of the simplex
that is feasible there; with three unknowns there are seven faces, and trying
each one exactly (a pseudo-inverse per face) is both exact and vectorised over
thousands of bootstrap draws, which an iterative solver called per draw is not.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]

#: How far below zero a face's solution may be (rounding) and still count as feasible.
_FEASIBLE = -1e-12


@dataclass(frozen=True)
class SimplexFit:
    """Per problem: the solution ``x`` (``(..., k)``) and its squared residual (``(...)``)."""

    x: Array
    residual: Array


def simplex_least_squares(matrix: Array, target: Array) -> SimplexFit:
    """Solve ``min ||target - matrix @ x||²`` over the simplex for each problem of the stack.

    ``matrix`` is ``(..., m, k)`` and ``target`` ``(..., m)``, with ``k`` <= 3.
    """
    k = matrix.shape[-1]
    best_x = np.zeros((*target.shape[:-1], k))
    best_residual = np.full(target.shape[:-1], np.inf)
    for size in range(1, k + 1):
        for face in combinations(range(k), size):
            x, residual = _face_solution(matrix, target, face)
            feasible = np.all(x >= _FEASIBLE, axis=-1)
            better = feasible & (residual < best_residual)
            best_x = np.where(better[..., None], x, best_x)
            best_residual = np.where(better, residual, best_residual)
    best_x = np.clip(best_x, 0.0, None)
    best_x /= best_x.sum(axis=-1, keepdims=True)
    return SimplexFit(best_x, best_residual)


def _face_solution(matrix: Array, target: Array, face: tuple[int, ...]) -> tuple[Array, Array]:
    """The least-squares point of the affine hull of ``face`` (zero off it), and its residual.

    With the last index ``l`` of the face eliminated (``x_l = 1 - sum of the others``)
    the problem is unconstrained: ``target - A_l ≈ (A_others - A_l) s``.
    """
    last, others = face[-1], list(face[:-1])
    anchor = matrix[..., :, last]
    remainder = target - anchor
    x = np.zeros((*target.shape[:-1], matrix.shape[-1]))
    if not others:
        x[..., last] = 1.0
        return x, np.sum(remainder ** 2, axis=-1)
    directions = matrix[..., :, others] - anchor[..., None]
    steps = np.einsum("...ij,...j->...i", np.linalg.pinv(directions), remainder)
    x[..., others] = steps
    x[..., last] = 1.0 - steps.sum(axis=-1)
    fitted = np.einsum("...ij,...j->...i", directions, steps)
    return x, np.sum((remainder - fitted) ** 2, axis=-1)
