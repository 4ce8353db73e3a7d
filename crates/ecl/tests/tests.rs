//! The integration tests, in one binary.

/// An S-expression dump of syntax trees, for the golden files.
mod dump;
/// `tests/golden/*.txt`: inputs with their trees or error messages.
mod golden;
/// The long syntax read as the brief one.
mod long;
/// Random trees printed and parsed back.
mod property;
