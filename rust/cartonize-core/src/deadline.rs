//! A time budget that ends search with the best answer found so far.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Extra time the first complete packing may take past the `timeout`: this
/// much, plus [`GRACE_SHARE`] of the timeout, at most [`GRACE_MAX`]. Past it
/// the pack fails with [`crate::CoreError::Timeout`] rather than run on.
pub const GRACE_SECONDS: f64 = 1.0;

/// Share of the timeout added to [`GRACE_SECONDS`].
pub const GRACE_SHARE: f64 = 0.1;

/// Longest grace, in seconds: well inside the 30 s the web server's worker
/// timeout leaves above the service's maximum `timeout` (api/gunicorn.conf.py).
pub const GRACE_MAX: f64 = 20.0;

/// When the request's `timeout` runs out (never, without one), and when even the
/// first complete packing must give up. A copy made by [`Deadline::stoppable`]
/// also ends, hard, once its flag is set: a search run ahead of being needed
/// stops when it turns out not to be.
#[derive(Debug, Clone)]
pub struct Deadline {
    end: Option<Instant>,
    hard_end: Option<Instant>,
    stop: Option<Arc<AtomicBool>>,
}

impl Deadline {
    /// A deadline `seconds` from now; `None` or a non-positive value means none.
    pub fn after(seconds: Option<f64>) -> Self {
        let now = Instant::now();
        let seconds = seconds.filter(|s| s.is_finite() && *s > 0.0);
        let at = |s: f64| now.checked_add(Duration::from_secs_f64(s.min(1e9)));
        Deadline {
            end: seconds.and_then(at),
            hard_end: seconds.and_then(|s| at(s + grace(s))),
            stop: None,
        }
    }

    /// This deadline, ending as well once `stop` is set.
    pub fn stoppable(&self, stop: Arc<AtomicBool>) -> Self {
        Deadline {
            stop: Some(stop),
            ..self.clone()
        }
    }

    fn stopped(&self) -> bool {
        self.stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// The timeout has passed: search stops trying further packings.
    pub fn expired(&self) -> bool {
        self.end.is_some_and(|e| Instant::now() >= e) || self.stopped()
    }

    /// The grace after the timeout has passed too: even the first packing stops.
    pub fn hard_expired(&self) -> bool {
        self.hard_end.is_some_and(|e| Instant::now() >= e) || self.stopped()
    }

    /// Whether a packing that `must_finish` (the first) or not gives up now.
    pub fn stops(&self, must_finish: bool) -> bool {
        if must_finish {
            self.hard_expired()
        } else {
            self.expired()
        }
    }
}

/// Grace past a timeout of `seconds` (see [`GRACE_SECONDS`]).
pub fn grace(seconds: f64) -> f64 {
    (GRACE_SECONDS + GRACE_SHARE * seconds).min(GRACE_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grace_follows_the_timeout() {
        let d = Deadline::after(Some(0.01));
        assert!(!d.stops(true));
        std::thread::sleep(Duration::from_millis(20));
        assert!(d.expired() && d.stops(false));
        assert!(!d.hard_expired() && !d.stops(true));
        let never = Deadline::after(None);
        assert!(!never.expired() && !never.hard_expired());
        assert!((grace(30.0) - 4.0).abs() < 1e-12);
        assert!((grace(3600.0) - GRACE_MAX).abs() < 1e-12);
    }

    #[test]
    fn a_stoppable_deadline_ends_when_stopped() {
        let flag = Arc::new(AtomicBool::new(false));
        let d = Deadline::after(None).stoppable(flag.clone());
        assert!(!d.expired() && !d.hard_expired());
        flag.store(true, Ordering::Relaxed);
        assert!(d.expired() && d.hard_expired() && d.stops(true));
        // The deadline it was made from runs on.
        assert!(!Deadline::after(None).expired());
    }
}
