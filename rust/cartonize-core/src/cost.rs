//! What a box costs: its fixed price plus the rate of its rate table at the
//! rating weight, the larger of the gross weight and the dimensional weight
//! (reference.md "Cost"). The Python layer resolves carrier tables to
//! breakpoints, so the engine only knows breakpoints and the linear model.

use serde::{Deserialize, Serialize};

/// A weight at most this share above a breakpoint counts as that
/// breakpoint: weights are sums of decimal fractions in binary floating
/// point, and 20 units of 0.05 weigh 1.0000000000000002, which a carrier
/// bills as 1, not as the next step.
pub const BREAKPOINT_SLACK: f64 = 1e-9;

/// How a rate follows from the rating weight.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase", tag = "method")]
pub enum Rate {
    /// `rates[i]` applies up to and including `weights[i]` (within
    /// [`BREAKPOINT_SLACK`]); weights ascend from 0. Below the first
    /// breakpoint the first rate, above the last the last.
    #[serde(rename_all = "camelCase")]
    Breakpoints { weights: Vec<f64>, rates: Vec<f64> },
    /// `base_price + price_increase_rate × weight`.
    #[serde(rename_all = "camelCase")]
    Linear {
        base_price: f64,
        price_increase_rate: f64,
    },
}

impl Rate {
    /// The rate at `weight`.
    pub fn at(&self, weight: f64) -> f64 {
        match self {
            Rate::Breakpoints { weights, rates } => {
                let i = breakpoint_index(weights, weight).min(rates.len().saturating_sub(1));
                rates.get(i).copied().unwrap_or(0.0)
            }
            // A line may fall below 0 (the public schema bounds neither field), but a
            // box's price in the response never does: the rate stops at 0.
            Rate::Linear {
                base_price,
                price_increase_rate,
            } => (base_price + price_increase_rate * weight).max(0.0),
        }
    }

    /// The least rate at any weight from `weight` up: a bound below what a
    /// box rated at `weight` or more can cost, whatever it holds.
    pub fn least_from(&self, weight: f64) -> f64 {
        match self {
            Rate::Breakpoints { weights, rates } => {
                let i = breakpoint_index(weights, weight).min(rates.len().saturating_sub(1));
                let rest = rates
                    .get(i..)
                    .and_then(|r| r.iter().copied().reduce(f64::min));
                rest.unwrap_or(0.0)
            }
            Rate::Linear {
                price_increase_rate,
                ..
            } if *price_increase_rate < 0.0 => 0.0,
            Rate::Linear { .. } => self.at(weight),
        }
    }
}

/// The first breakpoint of `weights` that takes `weight` (the length when
/// none does).
fn breakpoint_index(weights: &[f64], weight: f64) -> usize {
    weights.partition_point(|w| *w * (1.0 + BREAKPOINT_SLACK) < weight)
}

/// A box type's rate table, lowered.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Rating {
    /// Volume the dimensional weight is based on: the inner volume, or the
    /// outer one with `outerBasedCost`.
    pub volume: f64,
    /// Volume per unit of weight; `None`, 0 or negative (-1) disables
    /// dimensional weight.
    #[serde(default)]
    pub dim_factor: Option<f64>,
    /// `None`: only the fixed price is charged (dimensional weight is still
    /// reported).
    #[serde(default)]
    pub rate: Option<Rate>,
}

impl Rating {
    /// Dimensional weight, when the table has an active `dimFactor`.
    pub fn dimensional_weight(&self) -> Option<f64> {
        self.dim_factor
            .filter(|f| f.is_finite() && *f > 0.0)
            .map(|f| self.volume / f)
    }

    /// The weight a carrier charges for: the larger of `gross` and the
    /// dimensional weight, and whether the dimensional weight won.
    pub fn rating_weight(&self, gross: f64) -> (f64, bool) {
        match self.dimensional_weight() {
            Some(dim) if dim > gross => (dim, true),
            _ => (gross, false),
        }
    }
}

/// Cost of a box with fixed `price` (if any), inner `volume`, optional
/// `rating`, holding `gross` weight (tare included). Without a price and a
/// rate, the volume: then lowest cost means least volume.
pub fn box_cost(price: Option<f64>, volume: f64, rating: Option<&Rating>, gross: f64) -> f64 {
    priced(price, volume, rating, gross, Rate::at)
}

/// The least [`box_cost`] of the box at any gross weight from `gross` up.
pub fn least_box_cost(price: Option<f64>, volume: f64, rating: Option<&Rating>, gross: f64) -> f64 {
    priced(price, volume, rating, gross, Rate::least_from)
}

/// The price plus `charge` of the rate at the rating weight; without a
/// rate, the price or else the volume.
fn priced(
    price: Option<f64>,
    volume: f64,
    rating: Option<&Rating>,
    gross: f64,
    charge: fn(&Rate, f64) -> f64,
) -> f64 {
    match rating.and_then(|r| r.rate.as_ref().map(|rate| (r, rate))) {
        Some((r, rate)) => price.unwrap_or(0.0) + charge(rate, r.rating_weight(gross).0),
        None => price.unwrap_or(volume),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn breakpoints() -> Rate {
        Rate::Breakpoints {
            weights: vec![1.0, 2.0, 3.0],
            rates: vec![10.0, 15.0, 20.0],
        }
    }

    #[test]
    fn breakpoints_charge_the_first_breakpoint_at_or_above_the_weight() {
        let rate = breakpoints();
        let cases = [
            (0.0, 10.0),
            (0.5, 10.0),
            (1.0, 10.0),
            (1.01, 15.0),
            // Sums of decimal fractions: 20 x 0.05 and 0.1 + 0.2 + 2.7 are a
            // hair above 1 and 3 in binary floating point.
            ((0..20).map(|_| 0.05).sum::<f64>(), 10.0),
            (0.1 + 0.2 + 2.7, 20.0),
            (2.0, 15.0),
            (2.5, 20.0),
            (3.0, 20.0),
            // Above the last breakpoint: the last rate, not pro-rated.
            (40.0, 20.0),
        ];
        for (weight, expected) in cases {
            assert_eq!(rate.at(weight), expected, "weight {weight}");
        }
    }

    #[test]
    fn least_rate_from_a_weight_is_the_least_of_the_rates_that_apply_from_it() {
        // A table whose rates fall after a peak: the least from 1.5 is the
        // last rate, below the rate at 1.5 itself.
        let falling = Rate::Breakpoints {
            weights: vec![1.0, 2.0, 3.0],
            rates: vec![10.0, 25.0, 12.0],
        };
        assert_eq!(falling.least_from(0.0), 10.0);
        assert_eq!(falling.least_from(1.5), 12.0);
        assert_eq!(falling.least_from(40.0), 12.0);
        assert_eq!(breakpoints().least_from(1.5), 15.0);
        let empty = Rate::Breakpoints {
            weights: vec![],
            rates: vec![],
        };
        assert_eq!(empty.least_from(3.0), empty.at(3.0));
        // A rate that falls with weight reaches 0, where it stops.
        let falling_line = Rate::Linear {
            base_price: 5.0,
            price_increase_rate: -1.0,
        };
        assert_eq!(falling_line.least_from(2.0), 0.0);
        assert_eq!(falling_line.at(2.0), 3.0);
        assert_eq!(falling_line.at(9.0), 0.0);
        let rising_line = Rate::Linear {
            base_price: 5.0,
            price_increase_rate: 2.0,
        };
        assert_eq!(rising_line.least_from(2.0), 9.0);
    }

    #[test]
    fn linear_rate_is_base_plus_slope_times_weight() {
        // The schema's example: $5/lb and a $5 base give $10 at 1 lb, $20 at 3 lb.
        let rate = Rate::Linear {
            base_price: 5.0,
            price_increase_rate: 5.0,
        };
        assert_eq!(rate.at(1.0), 10.0);
        assert_eq!(rate.at(3.0), 20.0);
    }

    #[test]
    fn dimensional_weight_wins_only_when_heavier() {
        // 10 × 10 × 13.9 = 1390 cubic inches at 139 per pound: 10 lb.
        let rating = Rating {
            volume: 1390.0,
            dim_factor: Some(139.0),
            rate: Some(Rate::Linear {
                base_price: 0.0,
                price_increase_rate: 100.0,
            }),
        };
        assert_eq!(rating.rating_weight(4.0), (10.0, true));
        assert_eq!(rating.rating_weight(12.0), (12.0, false));
        assert!((box_cost(Some(50.0), 1390.0, Some(&rating), 4.0) - 1050.0).abs() < 1e-9);
        let disabled = Rating {
            dim_factor: Some(-1.0),
            ..rating
        };
        assert_eq!(disabled.dimensional_weight(), None);
        assert!((box_cost(None, 1390.0, Some(&disabled), 4.0) - 400.0).abs() < 1e-9);
    }

    #[test]
    fn without_a_rate_the_price_or_else_the_volume() {
        assert_eq!(box_cost(Some(7.0), 1000.0, None, 3.0), 7.0);
        assert_eq!(box_cost(None, 1000.0, None, 3.0), 1000.0);
        let dim_only = Rating {
            volume: 1000.0,
            dim_factor: Some(100.0),
            rate: None,
        };
        assert_eq!(box_cost(None, 1000.0, Some(&dim_only), 3.0), 1000.0);
    }
}
