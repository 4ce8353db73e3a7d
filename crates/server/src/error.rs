//! Why the server could not start or stopped: one error for startup's
//! rooms (config, editions, packages) and the listener.

use std::fmt;

use crate::config;

/// Why the server could not start or stopped.
#[derive(Debug)]
pub enum ServeError {
    /// The config cannot be used.
    Config(String),
    /// An edition file cannot be loaded.
    Edition(String),
    /// The demo edition could not be made.
    Demo(String),
    /// Binding or serving failed.
    Io(String),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::Config(m)
            | ServeError::Edition(m)
            | ServeError::Demo(m)
            | ServeError::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ServeError {}

impl From<config::ConfigError> for ServeError {
    fn from(e: config::ConfigError) -> Self {
        ServeError::Config(e.to_string())
    }
}
