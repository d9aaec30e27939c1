"""Prediction-powered inference (PPI++) for production rates: filled in below."""
