//! A time budget that ends search with the best answer found so far.

use std::time::{Duration, Instant};

/// When the request's `timeout` runs out (never, without one).
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    end: Option<Instant>,
}

impl Deadline {
    /// A deadline `seconds` from now; `None` or a non-positive value means none.
    pub fn after(seconds: Option<f64>) -> Self {
        let end = seconds
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(|s| Instant::now() + Duration::from_secs_f64(s));
        Deadline { end }
    }

    pub fn expired(&self) -> bool {
        self.end.is_some_and(|e| Instant::now() >= e)
    }
}
