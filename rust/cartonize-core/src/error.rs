//! The one error type of the engine.

use std::fmt;

/// Everything the engine can refuse. Callers map each variant to a status.
#[derive(Debug, Clone, PartialEq)]
pub enum CoreError {
    /// The input could not be decoded (malformed JSON or wrong shape).
    Decode(String),
    /// The input decoded but is invalid or contradictory; `field` names where.
    Invalid { field: String, message: String },
    /// Not even one complete packing was found within `timeout` seconds plus
    /// the grace after it; `service_limit` as in
    /// [`crate::model::Options::service_limit`].
    Timeout {
        timeout: f64,
        grace: f64,
        service_limit: Option<f64>,
    },
}

impl fmt::Display for CoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreError::Decode(msg) => write!(f, "cannot decode engine input: {msg}"),
            CoreError::Invalid { field, message } => write!(f, "{field}: {message}"),
            CoreError::Timeout {
                timeout,
                grace,
                service_limit: None,
            } => write!(
                f,
                "timeout: no complete packing was found within {timeout} s (and {grace:.1} s \
                 of grace); give a larger timeout or fewer items"
            ),
            CoreError::Timeout {
                grace,
                service_limit: Some(limit),
                ..
            } => write!(
                f,
                "no complete packing was found within the service's time limit of {limit} s \
                 (and {grace:.1} s of grace); send fewer items or box types"
            ),
        }
    }
}

impl std::error::Error for CoreError {}

impl From<serde_json::Error> for CoreError {
    fn from(e: serde_json::Error) -> Self {
        CoreError::Decode(e.to_string())
    }
}
