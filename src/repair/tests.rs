//! The jobs over a real catalog.
