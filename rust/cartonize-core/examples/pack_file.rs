//! Packs an engine input JSON file and prints a summary:
//! `cargo run --release --example pack_file FILE [REPEATS]`. With REPEATS it
//! packs that many times and also prints the median and worst wall time.

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: pack_file FILE [REPEATS]")?;
    let repeats: usize = args.next().map_or(Ok(1), |r| r.parse())?;
    let text = std::fs::read_to_string(path)?;
    let input: cartonize_core::PackInput = serde_json::from_str(&text)?;
    let mut times = Vec::new();
    let mut out = cartonize_core::PackOutput::default();
    for _ in 0..repeats.max(1) {
        let started = Instant::now();
        out = cartonize_core::pack(&input)?;
        times.push(started.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    let volume: f64 = input
        .items
        .iter()
        .map(|i| i.dimensions.iter().product::<f64>() * f64::from(i.quantity))
        .sum();
    println!(
        "boxes {} leftovers {} item volume {:.4e} sort {} median {:.3} ms max {:.3} ms",
        out.boxes.len(),
        out.leftovers.len(),
        volume,
        out.item_sort_used,
        times[times.len() / 2],
        times[times.len() - 1]
    );
    Ok(())
}
