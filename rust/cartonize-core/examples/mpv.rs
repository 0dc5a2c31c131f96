//! Packs the Martello–Pisinger–Vigo 3D bin packing instances (classes 1, 4–8)
//! and prints bins per (class, n) group next to the L2 lower bounds.
//!
//! `cargo run --release --example mpv [DIR] [--timeout SECONDS]`, DIR defaulting
//! to `/work/shared/benchmarks/mpv2000`. Every packing is checked by
//! [`validate`], which shares no code with the engine; a bad packing aborts.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cartonize_core::model::{BoxTypeInput, Goal, ItemKindInput, Options, PackInput, PackOutput};

const CLASSES: [u32; 6] = [1, 4, 5, 6, 7, 8];
const SIZES: [u32; 4] = [50, 100, 150, 200];

/// L2 sums per class (rows in `CLASSES` order) and n (columns in `SIZES` order),
/// from the benchmark README.
const L2: [[u32; 4]; 6] = [
    [125, 251, 347, 484],
    [287, 576, 852, 1163],
    [73, 129, 174, 244],
    [87, 175, 269, 350],
    [63, 109, 137, 210],
    [80, 175, 213, 267],
];

/// One instance: the bin and the items, each as (w, h, d) mapped to (x, y, z).
struct Instance {
    bin: [i64; 3],
    items: Vec<[i64; 3]>,
}

fn read_instance(path: &Path) -> Result<Instance, Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path)?;
    let mut nums = text.split_whitespace().map(str::parse::<i64>);
    let mut next = || -> Result<i64, Box<dyn std::error::Error>> {
        Ok(nums.next().ok_or("truncated instance")??)
    };
    let bin = [next()?, next()?, next()?];
    let n = next()?;
    let mut items = Vec::new();
    for _ in 0..n {
        items.push([next()?, next()?, next()?]);
    }
    Ok(Instance { bin, items })
}

fn to_input(inst: &Instance, timeout: Option<f64>) -> PackInput {
    let f = |v: &[i64; 3]| v.map(|x| x as f64);
    PackInput {
        items: inst
            .items
            .iter()
            .map(|d| ItemKindInput {
                dimensions: f(d),
                weight: 1.0,
                quantity: 1,
                free_axes: Some(vec![]),
            })
            .collect(),
        box_types: vec![BoxTypeInput {
            dimensions: f(&inst.bin),
            weight_max: 0.0,
            weight_tare: 0.0,
            price: None,
            rating: None,
        }],
        options: Options {
            goal: Goal::MostItems,
            timeout,
            ..Options::default()
        },
        ..PackInput::default()
    }
}

/// Independent check: every item packed exactly once, as given (no
/// rotation), inside its bin, and no two items in a bin share volume.
fn validate(inst: &Instance, out: &PackOutput) -> Result<(), String> {
    if !out.leftovers.is_empty() {
        return Err(format!("{} leftovers", out.leftovers.len()));
    }
    let mut seen = vec![false; inst.items.len()];
    for (b, packed) in out.boxes.iter().enumerate() {
        let mut placed: Vec<([i64; 3], [i64; 3])> = Vec::new();
        for p in &packed.items {
            let i = p.item;
            if i >= seen.len() || seen[i] {
                return Err(format!("item {i} missing from input or packed twice"));
            }
            seen[i] = true;
            let o = p.origin.map(|v| v.round() as i64);
            let s = p.dimensions.map(|v| v.round() as i64);
            if (0..3).any(|a| (o[a] as f64 - p.origin[a]).abs() > 1e-6) {
                return Err(format!("item {i} at non-integer origin {:?}", p.origin));
            }
            if s != inst.items[i] {
                return Err(format!(
                    "item {i} placed as {s:?}, given {:?}",
                    inst.items[i]
                ));
            }
            if (0..3).any(|a| o[a] < 0 || o[a] + s[a] > inst.bin[a]) {
                return Err(format!("bin {b}: item {i} at {o:?} size {s:?} sticks out"));
            }
            for (qo, qs) in &placed {
                let apart = (0..3).any(|a| o[a] + s[a] <= qo[a] || qo[a] + qs[a] <= o[a]);
                if !apart {
                    return Err(format!("bin {b}: item {i} at {o:?} overlaps one at {qo:?}"));
                }
            }
            placed.push((o, s));
        }
    }
    if let Some(i) = seen.iter().position(|s| !s) {
        return Err(format!("item {i} not packed"));
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut dir = PathBuf::from("/work/shared/benchmarks/mpv2000");
    let mut timeout = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--timeout" {
            timeout = Some(args.next().ok_or("--timeout needs seconds")?.parse()?);
        } else {
            dir = PathBuf::from(a);
        }
    }
    println!("class     n   bins     L2   ms/inst  max ms");
    let (mut total, mut total_l2, mut total_ms) = (0u32, 0u32, 0.0f64);
    for (ci, class) in CLASSES.iter().enumerate() {
        for (ni, n) in SIZES.iter().enumerate() {
            let (mut bins, mut sum_ms, mut max_ms) = (0u32, 0.0f64, 0.0f64);
            for k in 1..=10 {
                let path = dir.join(format!("{class}_{n}")).join(k.to_string());
                let inst = read_instance(&path)?;
                let input = to_input(&inst, timeout);
                let started = Instant::now();
                let out = cartonize_core::pack(&input)?;
                let ms = started.elapsed().as_secs_f64() * 1e3;
                if let Err(e) = validate(&inst, &out) {
                    eprintln!("INVALID packing of {}: {e}", path.display());
                    std::process::exit(1);
                }
                bins += out.boxes.len() as u32;
                sum_ms += ms;
                max_ms = max_ms.max(ms);
            }
            let l2 = L2[ci][ni];
            println!(
                "{class:>5} {n:>5} {bins:>6} {l2:>6} {:>9.2} {max_ms:>7.2}",
                sum_ms / 10.0
            );
            total += bins;
            total_l2 += l2;
            total_ms += sum_ms;
        }
    }
    println!(
        "total       {total:>6} {total_l2:>6} {:>9.2}   (EP heuristic reference ~7465)",
        total_ms / 240.0
    );
    Ok(())
}
