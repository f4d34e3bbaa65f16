"""Nonlinear dynamics: Lyapunov exponents, stroboscopic and hyperplane Poincaré sections
and the classification of a motion as periodic, quasi-periodic or chaotic."""

from .lyapunov import LyapunovResult as LyapunovResult
from .lyapunov import initial_tangents as initial_tangents
from .lyapunov import lyapunov_exponents as lyapunov_exponents
from .lyapunov import tangent_field as tangent_field
from .classify import MOTION_NAMES as MOTION_NAMES
from .classify import classify_motion as classify_motion
from .classify import section_period as section_period
from .mechanism import ContinuedStart as ContinuedStart
from .mechanism import MechanismSection as MechanismSection
from .mechanism import driver_period as driver_period
from .mechanism import mechanism_section as mechanism_section
from .mechanism import periodic_driver as periodic_driver
from .mechanism import sampled_section as sampled_section
from .mechanism import section_times as section_times
from .crossings import DIRECTIONS as DIRECTIONS
from .crossings import Crossings as Crossings
from .crossings import CrossingTracking as CrossingTracking
from .crossings import Hyperplane as Hyperplane
from .crossings import crossing_period as crossing_period
from .mechanism import SectionQuantity as SectionQuantity
