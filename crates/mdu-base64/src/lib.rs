//! Placeholder, filled by a later change.
