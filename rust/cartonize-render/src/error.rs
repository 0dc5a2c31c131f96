//! The one error type of the renderer.

use std::fmt;

/// Everything the renderer can refuse. Callers map each variant to a status.
#[derive(Debug, Clone, PartialEq)]
pub enum RenderError {
    /// The input could not be decoded (malformed JSON or wrong shape).
    Decode(String),
    /// The input decoded but is invalid; `field` names where.
    Invalid { field: String, message: String },
    /// The SVG could not be rasterised (a bug, or an image too large to allocate).
    Raster(String),
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RenderError::Decode(msg) => write!(f, "cannot decode render input: {msg}"),
            RenderError::Invalid { field, message } => write!(f, "{field}: {message}"),
            RenderError::Raster(msg) => write!(f, "cannot rasterise picture: {msg}"),
        }
    }
}

impl std::error::Error for RenderError {}

impl From<serde_json::Error> for RenderError {
    fn from(e: serde_json::Error) -> Self {
        RenderError::Decode(e.to_string())
    }
}
