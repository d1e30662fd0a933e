"""Feedback Loop's write side: one package per bounded context, plus the runtime that wires them."""
