"""Contact time scales: the contact period estimate and the relative solve cost that orders
a sweep's points."""

import dataclasses
import pathlib

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import model
from pipelines.build import ParameterMap, build_mechanism
from pipelines.config import load_mechanism
from tests.helpers import FLORES

CONFIG = FLORES
RESTITUTION = ("joints.pin.contact.restitution",)


@pytest.fixture(scope="module")
def flores():
    return build_mechanism(load_mechanism(CONFIG))


def with_restitution(mechanism, restitution):
    return ParameterMap(mechanism, RESTITUTION).apply(mechanism, jnp.stack([jnp.asarray(restitution, float)]))


def test_relative_cost_is_impacts_per_contact_period(flores):
    period = float(model.contact_periods(flores)[0])
    for restitution in (0.5, 0.9):
        cost = float(model.relative_solve_cost(with_restitution(flores, restitution)))
        assert cost == pytest.approx(1.0 / (period * (1.0 - restitution)), rel=1e-12)


def test_less_dissipation_and_stiffer_contact_cost_more(flores):
    costs = [float(model.relative_solve_cost(with_restitution(flores, e))) for e in (0.3, 0.6, 0.9, 0.99, 1.0)]
    assert np.all(np.diff(costs[:4]) > 0)
    assert costs[4] == costs[3]  # capped at LOSSLESS_RESTITUTION
    stiffer = ParameterMap(flores, ("joints.pin.clearance",)).apply(flores, np.array([0.1e-3]))
    assert model.contact_periods(stiffer)[0] < model.contact_periods(flores)[0]  # 0.1 mm vs 0.5 mm
    assert model.relative_solve_cost(stiffer) > model.relative_solve_cost(flores)


def test_laws_without_restitution_count_as_lossless(flores):
    contact = flores.clearance_joints[0].contact
    hertz = eqx.tree_at(lambda m: m.clearance_joints[0].contact, flores, dataclasses.replace(contact, model="hertz"))
    low, high = (float(model.relative_solve_cost(with_restitution(hertz, e))) for e in (0.3, 0.9))
    assert low == high == pytest.approx(1.0 / (float(model.contact_periods(hertz)[0]) * (1 - model.integrate.timescales.LOSSLESS_RESTITUTION)))


def test_cost_is_pure_jax(flores):
    costs = jax.jit(jax.vmap(lambda e: model.relative_solve_cost(with_restitution(flores, e))))(np.array([0.5, 0.9]))
    gradient = jax.grad(lambda e: model.relative_solve_cost(with_restitution(flores, e)))(0.9)
    assert costs.shape == (2,) and float(gradient) > 0
