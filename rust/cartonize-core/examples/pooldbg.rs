//! Packs the given MPV instance files with `timeout` (first argument) and
//! prints bins and time per instance; with `POOL_DEBUG` / `POOL_DUMP` set,
//! the column-pool experiment reports each covering / dumps each pool.
//! `cargo run --release --example pooldbg -- 1 /work/shared/benchmarks/mpv2000/5_50/1`

use cartonize_core::model::{BoxTypeInput, Goal, ItemKindInput, Options, PackInput};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let timeout: f64 = args.first().ok_or("timeout needed")?.parse()?;
    let mut total = 0;
    for path in &args[1..] {
        let text = std::fs::read_to_string(path)?;
        let v: Vec<i64> = text
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()?;
        let n = usize::try_from(v[3])?;
        let items: Vec<ItemKindInput> = (0..n)
            .map(|i| ItemKindInput {
                dimensions: [v[4 + 3 * i], v[5 + 3 * i], v[6 + 3 * i]].map(|x| x as f64),
                weight: 1.0,
                quantity: 1,
                free_axes: Some(vec![]),
            })
            .collect();
        let input = PackInput {
            items,
            box_types: vec![BoxTypeInput {
                dimensions: [v[0], v[1], v[2]].map(|x| x as f64),
                weight_max: 0.0,
                weight_tare: 0.0,
                price: None,
                rating: None,
            }],
            options: Options {
                goal: Goal::MostItems,
                timeout: Some(timeout),
                ..Options::default()
            },
            ..PackInput::default()
        };
        let t = std::time::Instant::now();
        let out = cartonize_core::pack(&input)?;
        eprintln!(
            "{path}: {} bins {:.0} ms",
            out.boxes.len(),
            t.elapsed().as_secs_f64() * 1000.0
        );
        total += out.boxes.len();
    }
    println!("total {total}");
    Ok(())
}
