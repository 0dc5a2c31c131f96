//! Packs an engine input JSON file and prints a summary:
//! `cargo run --release --example pack_file FILE [REPEATS [OUT]]`. With REPEATS it
//! packs that many times and also prints the median and worst wall time, and
//! on Linux the mean CPU time of the process per pack (every thread, from
//! `/proc/self/stat`; steadier than wall time on a shared machine, since the
//! portfolio packs on all cores). `python -m bench.engine_input WORKLOAD FILE`
//! writes such files from the benchmarks' orders. With OUT it also writes the
//! last answer there as JSON, its `packTime` set to 0, so two builds' answers
//! can be compared byte for byte.

use std::time::Instant;

/// User plus system CPU time of this process so far, in ms (clock ticks of
/// 10 ms, so only a sum over many packs means much); `None` off Linux.
fn process_cpu_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at state;
    // utime and stime are fields 14 and 15, so 12th and 13th after it.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: f64 = fields.next()?.parse().ok()?;
    let stime: f64 = fields.next()?.parse().ok()?;
    Some((utime + stime) * 10.0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: pack_file FILE [REPEATS]")?;
    let repeats: usize = args.next().map_or(Ok(1), |r| r.parse())?;
    let out_path = args.next();
    let text = std::fs::read_to_string(path)?;
    let input: cartonize_core::PackInput = serde_json::from_str(&text)?;
    let mut times = Vec::new();
    let mut out = cartonize_core::PackOutput::default();
    let cpu_before = process_cpu_ms();
    for _ in 0..repeats.max(1) {
        let started = Instant::now();
        out = cartonize_core::pack(&input)?;
        times.push(started.elapsed().as_secs_f64() * 1e3);
    }
    let cpu = match (cpu_before, process_cpu_ms()) {
        (Some(a), Some(b)) => format!(" cpu mean {:.1} ms", (b - a) / times.len() as f64),
        _ => String::new(),
    };
    if let Some(out_path) = out_path {
        let mut answer = out.clone();
        answer.pack_time = 0.0;
        std::fs::write(out_path, serde_json::to_string(&answer)?)?;
    }
    times.sort_by(f64::total_cmp);
    let volume: f64 = input
        .items
        .iter()
        .map(|i| i.dimensions.iter().product::<f64>() * f64::from(i.quantity))
        .sum();
    println!(
        "boxes {} leftovers {} item volume {:.4e} sort {} median {:.3} ms max {:.3} ms{cpu}",
        out.boxes.len(),
        out.leftovers.len(),
        volume,
        out.item_sort_used,
        times[times.len() / 2],
        times[times.len() - 1]
    );
    Ok(())
}

/// The allocator of the Python extension (`cartonize-py`), so engine figures
/// match the service's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
