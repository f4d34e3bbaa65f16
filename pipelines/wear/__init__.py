"""Wear over a service life (``clearance wear CONFIG``): the config's schema (``schema``),
the life loop of simulations and profile updates with its resumable tables (``life``), and
the figures (``plots``)."""
