//! Renders a render input read from a JSON file (as `_core.render_json` gets it) and
//! prints the time taken and the output's size: for profiling the renderer alone
//! (`valgrind --tool=callgrind`, `perf record`) on inputs captured from real packs.
//!
//! `cargo run --release -p cartonize-render --example render_file -- INPUT.json [REPEATS]`

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or("usage: render_file INPUT.json [REPEATS]")?;
    let repeats: usize = args.next().map_or(Ok(1), |r| r.parse())?;
    let input = std::fs::read_to_string(path)?;
    let mut times = Vec::with_capacity(repeats);
    let mut len = 0;
    for _ in 0..repeats {
        let started = Instant::now();
        len = cartonize_render::render_json(&input)?.len();
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    println!(
        "median {:.2} ms over {repeats} runs, output {len} bytes",
        times[times.len() / 2]
    );
    Ok(())
}
