import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from model import NORMAL_FORCE_LAWS, ContactLaw, adams_damping_max, hysteresis_factor, normal_force
from model.contact import LAWS_WITHOUT_RESTITUTION, NORMAL_LAW_CLASSES, AbstractNormalLaw

K = 1e9  # N/m^1.5
DELTA = 1e-5  # m
RATE = 0.5  # m/s
MEMORY = 1.0  # m/s
E = 0.8
ELASTIC = K * DELTA**1.5  # 31.6228 N


def law(model, **kwargs):
    return ContactLaw(model, stiffness=K, restitution=E, **kwargs)


@pytest.mark.parametrize(
    "model, chi",
    [
        ("hertz", 0.0),
        ("hunt_crossley", 0.3),  # 3 (1 - 0.8) / 2
        ("lankarani_nikravesh", 0.27),  # 3 (1 - 0.64) / 4
        ("flores", 0.4),  # 8 (0.2) / (5 * 0.8)
        ("gonthier", 0.45),  # 0.36 / 0.8
        ("hu_guo", 0.375),  # 3 (0.2) / (2 * 0.8)
    ],
)
def test_hysteresis_laws_by_hand(model, chi):
    assert float(hysteresis_factor(model, E)) == pytest.approx(chi, rel=1e-12)
    expected = ELASTIC * (1.0 + chi * RATE / MEMORY)
    assert float(normal_force(law(model), DELTA, RATE, MEMORY)) == pytest.approx(expected, rel=1e-12)


def test_hertz_value():
    assert ELASTIC == pytest.approx(31.6228, rel=1e-5)
    assert float(normal_force(law("hertz"), DELTA, -3.0, 0.0)) == pytest.approx(ELASTIC, rel=1e-12)


def test_kelvin_voigt_clips_damping_while_separating():
    kv = law("kelvin_voigt", damping=1e3)
    assert float(normal_force(kv, DELTA, RATE, MEMORY)) == pytest.approx(ELASTIC + 500.0, rel=1e-12)
    assert float(normal_force(kv, DELTA, -RATE, MEMORY)) == pytest.approx(ELASTIC, rel=1e-12)


def test_registry_names_every_law_once():
    # Every registered class is a final AbstractNormalLaw under its own name; the names the
    # config allows and the restitution-free set derive from the registry.
    assert NORMAL_FORCE_LAWS == tuple(NORMAL_LAW_CLASSES)
    for name, cls in NORMAL_LAW_CLASSES.items():
        assert issubclass(cls, AbstractNormalLaw) and cls.name == name
        assert ContactLaw(name, stiffness=K).law == cls()
    assert set(LAWS_WITHOUT_RESTITUTION) == {"hertz", "kelvin_voigt"}
    with pytest.raises(ValueError, match="unknown normal force law"):
        ContactLaw("no_such_law", stiffness=K)


def test_adams_impact_by_hand():
    # c_max = 3 K (1 - e^2) d_max^n / (4 v_minus) = 0.27 * 1e9 * 1e-6 / 1 = 270 N s/m
    assert float(adams_damping_max(K, 1.5, E, 1.0, 1e-4)) == pytest.approx(270.0, rel=1e-12)
    # delta = d_max / 10 -> STEP = 0.1^2 (3 - 0.2) = 0.028 -> damping 7.56 N s/m
    expected = ELASTIC + 270.0 * 0.028 * RATE
    assert float(normal_force(law("adams_impact"), DELTA, RATE, MEMORY)) == pytest.approx(expected, rel=1e-12)
    # beyond d_max the full c_max applies
    deep = 2e-4
    expected_deep = K * deep**1.5 + 270.0 * RATE
    assert float(normal_force(law("adams_impact"), deep, RATE, MEMORY)) == pytest.approx(expected_deep, rel=1e-12)


def test_impact_velocity_floor():
    # memory 0 is floored at 1e-3 m/s
    expected = ELASTIC * (1.0 + 0.27 * RATE / 1e-3)
    assert float(normal_force(law("lankarani_nikravesh"), DELTA, RATE, 0.0)) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("model", NORMAL_FORCE_LAWS)
def test_nonnegative_and_zero_apart(model):
    contact = law(model, damping=1e3)
    penetrations = jnp.linspace(-1e-5, 1e-4, 23)
    rates = jnp.linspace(-20.0, 20.0, 17)
    forces = jax.vmap(lambda d: jax.vmap(lambda v: normal_force(contact, d, v, MEMORY))(rates))(penetrations)
    assert bool(jnp.all(forces >= 0.0))
    assert bool(jnp.all(forces[penetrations <= 0.0] == 0.0))
    # a strongly separating rate is clipped rather than pulling (all dissipative laws)
    if model not in ("hertz", "kelvin_voigt"):
        assert float(normal_force(contact, 1e-4, -1e4, MEMORY)) == 0.0


@pytest.mark.parametrize("model", NORMAL_FORCE_LAWS)
@pytest.mark.parametrize("penetration, rate, memory", [(0.0, 1.0, 1.0), (-1e-6, 0.5, 1.0), (1e-6, 0.0, 0.0), (0.0, 0.0, 0.0)])
def test_grad_finite(model, penetration, rate, memory):
    contact = law(model, damping=1e3)
    grads = jax.grad(lambda d, v, m: normal_force(contact, d, v, m), argnums=(0, 1, 2))(penetration, rate, memory)
    assert all(np.isfinite(g) for g in grads)
    # and with respect to the law's parameters
    param_grads = jax.grad(lambda c: normal_force(c, penetration, rate, memory))(contact)
    assert all(bool(jnp.all(jnp.isfinite(x))) for x in jax.tree.leaves(param_grads))


@pytest.mark.parametrize("model", NORMAL_FORCE_LAWS)
def test_jit_and_vmap(model):
    contact = law(model, damping=1e3)
    penetrations = jnp.array([-1e-5, 0.0, 1e-6, 1e-5, 5e-5])
    direct = jnp.stack([normal_force(contact, d, RATE, MEMORY) for d in penetrations])
    batched = jax.jit(jax.vmap(normal_force, in_axes=(None, 0, None, None)))(contact, penetrations, RATE, MEMORY)
    np.testing.assert_allclose(batched, direct, rtol=1e-14)
    # vmap over a law parameter
    restitutions = jnp.array([0.5, 0.9])
    vmapped = jax.vmap(lambda e: normal_force(eqx.tree_at(lambda c: c.restitution, contact, e), DELTA, RATE, MEMORY))(
        restitutions
    )
    assert vmapped.shape == (2,)


def test_unknown_model_refused():
    with pytest.raises(ValueError, match="unknown normal force law"):
        ContactLaw("hertzz", stiffness=1.0)
