"""introspection: validate recipe packages, calibrate judges, export calibration data."""

__version__ = "0.1.0"
