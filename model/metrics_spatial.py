"""The spatial body metrics' names, for importers of this module: the metrics of both
dimensions are :mod:`model.metrics`."""

from .metrics import SPATIAL_BODY_METRICS as SPATIAL_BODY_METRICS
