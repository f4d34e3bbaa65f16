import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model import FRICTION_LAWS, FrictionLaw, friction_coefficient, friction_force

NORMAL = 250.0  # N
MU = 0.1

LAWS = {
    "none": FrictionLaw("none", coefficient=MU),
    "coulomb_tanh": FrictionLaw("coulomb_tanh", coefficient=MU),
    "ambrosio": FrictionLaw("ambrosio", coefficient=MU),
    "static_dynamic": FrictionLaw("static_dynamic", coefficient=MU, static_coefficient=0.15),
}


def test_all_laws_covered():
    assert set(LAWS) == set(FRICTION_LAWS)


@pytest.mark.parametrize("name", FRICTION_LAWS)
def test_large_slip_limit(name):
    expected = 0.0 if name == "none" else MU * NORMAL
    for v in (1.0, 5.0):
        assert float(friction_force(LAWS[name], NORMAL, v)) == pytest.approx(expected, rel=1e-9)
        assert float(friction_force(LAWS[name], NORMAL, -v)) == pytest.approx(-expected, rel=1e-9)


@pytest.mark.parametrize("name", FRICTION_LAWS)
def test_odd_zero_at_rest_and_bounded(name):
    velocities = jnp.linspace(-0.05, 0.05, 2001)
    forces = friction_force(LAWS[name], NORMAL, velocities)
    np.testing.assert_allclose(forces, -forces[::-1], atol=1e-12)
    assert float(friction_force(LAWS[name], NORMAL, 0.0)) == 0.0
    assert bool(jnp.all(forces * velocities >= 0.0))  # sign of the slip
    assert float(jnp.max(jnp.abs(forces))) <= 0.15 * NORMAL + 1e-9


@pytest.mark.parametrize("name", FRICTION_LAWS)
def test_continuous(name):
    law = LAWS[name]
    v_s, v_d = law.velocities
    for breakpoint in (0.0, v_s, v_d, -v_s, -v_d):
        left = friction_coefficient(law, breakpoint - 1e-12)
        right = friction_coefficient(law, breakpoint + 1e-12)
        assert abs(float(left - right)) < 1e-6
    # no jump anywhere on a fine grid: max increment shrinks with the grid spacing
    velocities = jnp.linspace(-3e-3, 3e-3, 600_001)
    assert float(jnp.max(jnp.abs(jnp.diff(friction_coefficient(law, velocities))))) < 1e-3


def test_static_dynamic_shape():
    law = LAWS["static_dynamic"]
    assert float(friction_coefficient(law, 1.0e-3)) == pytest.approx(0.15)  # mu_s at v_s
    assert float(friction_coefficient(law, 1.5e-3)) == pytest.approx(0.10)  # mu_d at v_d
    assert float(friction_coefficient(law, 1.25e-3)) == pytest.approx(0.125)  # haversine midpoint
    # STEP(v, -v_s, -mu_s, v_s, mu_s) at v = v_s/2: D = 0.75, D^2 (3 - 2D) = 0.84375
    assert float(friction_coefficient(law, 0.5e-3)) == pytest.approx(-0.15 + 0.3 * 0.84375)
    assert float(friction_coefficient(law, -1.0e-3)) == pytest.approx(-0.15)
    # static coefficient defaults to the dynamic one
    assert float(friction_coefficient(FrictionLaw("static_dynamic", coefficient=MU), 1.2e-3)) == pytest.approx(MU)


def test_coulomb_tanh_and_ambrosio_values():
    assert float(friction_force(LAWS["coulomb_tanh"], NORMAL, 0.01)) == pytest.approx(MU * NORMAL * np.tanh(1.0))
    law = LAWS["ambrosio"]  # v0 = 1e-4, v1 = 1e-3
    assert float(friction_force(law, NORMAL, 0.5e-4)) == 0.0
    assert float(friction_force(law, NORMAL, 5.5e-4)) == pytest.approx(0.5 * MU * NORMAL)
    custom = FrictionLaw("coulomb_tanh", coefficient=MU, stiction_velocity=0.002)
    assert float(friction_force(custom, NORMAL, 0.002)) == pytest.approx(MU * NORMAL * np.tanh(1.0))


@pytest.mark.parametrize("name", FRICTION_LAWS)
@pytest.mark.parametrize("v", [0.0, 1e-3, 1.5e-3, 1e-4, -2e-3])
def test_grad_finite(name, v):
    grads = jax.grad(lambda fn, s: friction_force(LAWS[name], fn, s), argnums=(0, 1))(NORMAL, v)
    assert all(np.isfinite(g) for g in grads)
    law_grads = jax.grad(lambda law: friction_force(law, NORMAL, v))(LAWS[name])
    assert all(bool(jnp.all(jnp.isfinite(x))) for x in jax.tree.leaves(law_grads))


def test_jit_vmap():
    law = LAWS["static_dynamic"]
    velocities = jnp.linspace(-0.01, 0.01, 11)
    batched = jax.jit(jax.vmap(friction_force, in_axes=(None, None, 0)))(law, NORMAL, velocities)
    np.testing.assert_allclose(batched, friction_force(law, NORMAL, velocities), rtol=1e-14)


def test_unknown_model_refused():
    with pytest.raises(ValueError, match="unknown friction law"):
        FrictionLaw("coulomb")


def test_registry_names_every_law_once():
    from model.contact import FRICTION_LAW_CLASSES, AbstractFrictionLaw

    assert FRICTION_LAWS == tuple(FRICTION_LAW_CLASSES)
    for name, cls in FRICTION_LAW_CLASSES.items():
        assert issubclass(cls, AbstractFrictionLaw) and cls.name == name
        stiction, dynamic = cls.default_velocities
        assert 0.0 < stiction <= dynamic
    with pytest.raises(ValueError, match="unknown friction law"):
        FrictionLaw("no_such_law")
