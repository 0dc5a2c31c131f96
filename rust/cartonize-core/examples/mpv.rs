//! Packs the Martello–Pisinger–Vigo 3D bin packing instances (classes 1, 4–8)
//! and prints bins per (class, n) group next to the L2 lower bounds.
//!
//! `cargo run --release --example mpv [DIR] [--timeout SECONDS]`, DIR defaulting
//! to `/work/shared/benchmarks/mpv2000`. Every packing is checked by
//! [`validate`], which shares no code with the engine; a bad packing aborts.
//! `--n N` packs only the instances with N items; `--generated K` packs K
//! instances per group drawn from the published generator's distributions
//! (seeds of this example's own, see [`generated`]) instead of the files;
//! `--repeat R` packs each instance R times and reports the mean (engine
//! CPU is the packing thread's, so steadier than wall time on a shared
//! machine); `--list` prints each instance's bins.

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

/// CPU time this thread has run, from the scheduler's statistics (Linux;
/// zero elsewhere): updated at scheduler ticks, so good over a set of
/// instances, not for one. Wall time on a shared machine counts the others' work.
fn thread_cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns * 1e-9)
}

/// A small deterministic generator (SplitMix64) for the generated instances.
struct Draw(u64);

impl Draw {
    fn below(&mut self, n: i64) -> i64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n as u64) as i64
    }

    fn between(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below(hi - lo + 1)
    }
}

/// An instance drawn from the published generator's distributions (not its
/// code or seeds): classes 1, 4, 5 take the class's item type with
/// probability 60 % and each other of the five types with 10 %; classes 6-8
/// draw sides uniformly in 1..10, 1..35, 1..100 for bins of 10, 40, 100.
fn generated(class: u32, n: usize, seed: u64) -> Instance {
    let mut d = Draw(
        seed.wrapping_mul(1_000_003)
            .wrapping_add(u64::from(class) * 7919 + n as u64),
    );
    let (bin, sides) = match class {
        6 => (10, 10),
        7 => (40, 35),
        _ => (100, 100),
    };
    let items = (0..n)
        .map(|_| {
            if class >= 6 {
                return [0; 3].map(|_| d.between(1, sides));
            }
            let own = match class {
                1 => 1,
                4 => 4,
                _ => 5,
            };
            let r = d.below(10);
            let t = if r < 6 {
                own
            } else {
                [1, 2, 3, 4, 5]
                    .into_iter()
                    .filter(|&t| t != own)
                    .nth((r - 6) as usize)
                    .unwrap_or(own)
            };
            let (small, large, half_up, half_down) = (
                (1, bin / 2),
                (2 * bin / 3, bin),
                (bin / 2, bin),
                (1, bin / 2),
            );
            let pick = |d: &mut Draw, (lo, hi): (i64, i64)| d.between(lo, hi);
            match t {
                1 => [
                    pick(&mut d, small),
                    pick(&mut d, large),
                    pick(&mut d, large),
                ],
                2 => [
                    pick(&mut d, large),
                    pick(&mut d, small),
                    pick(&mut d, large),
                ],
                3 => [
                    pick(&mut d, large),
                    pick(&mut d, large),
                    pick(&mut d, small),
                ],
                4 => [0; 3].map(|_| pick(&mut d, half_up)),
                _ => [0; 3].map(|_| pick(&mut d, half_down)),
            }
        })
        .collect();
    Instance {
        bin: [bin; 3],
        items,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut dir = PathBuf::from("/work/shared/benchmarks/mpv2000");
    let mut timeout = None;
    let mut sizes: Vec<u32> = SIZES.to_vec();
    let mut generated_per_group = 0u64;
    let mut repeat = 1u32;
    let mut list = false;
    let mut classes: Vec<u32> = CLASSES.to_vec();
    let mut only: Option<u64> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--timeout" => timeout = Some(value()?.parse()?),
            "--n" => sizes = vec![value()?.parse()?],
            "--generated" => generated_per_group = value()?.parse()?,
            "--repeat" => repeat = value()?.parse()?,
            "--list" => list = true,
            "--class" => classes = vec![value()?.parse()?],
            "--instance" => only = Some(value()?.parse()?),
            _ => dir = PathBuf::from(a),
        }
    }
    let per_group = if generated_per_group > 0 {
        generated_per_group
    } else {
        10
    };
    println!("class     n   bins     L2   ms/inst  max ms");
    let (mut total, mut total_l2, mut total_ms, mut cpu) = (0u32, 0u32, 0.0f64, 0.0f64);
    let mut instances = 0u32;
    for (ci, class) in CLASSES.iter().enumerate() {
        for (ni, n) in SIZES.iter().enumerate() {
            if !sizes.contains(n) || !classes.contains(class) {
                continue;
            }
            let (mut bins, mut sum_ms, mut max_ms) = (0u32, 0.0f64, 0.0f64);
            for k in 1..=per_group {
                if only.is_some_and(|o| o != k) {
                    continue;
                }
                let (inst, name) = if generated_per_group > 0 {
                    (
                        generated(*class, *n as usize, 1000 + k),
                        format!("gen {class}_{n}/{k}"),
                    )
                } else {
                    let path = dir.join(format!("{class}_{n}")).join(k.to_string());
                    (read_instance(&path)?, path.display().to_string())
                };
                let input = to_input(&inst, timeout);
                let cpu_before = thread_cpu_seconds();
                let started = Instant::now();
                let mut out = cartonize_core::pack(&input)?;
                for _ in 1..repeat {
                    out = cartonize_core::pack(&input)?;
                }
                let ms = started.elapsed().as_secs_f64() * 1e3 / f64::from(repeat);
                cpu += (thread_cpu_seconds() - cpu_before) / f64::from(repeat);
                if let Err(e) = validate(&inst, &out) {
                    eprintln!("INVALID packing of {name}: {e}");
                    std::process::exit(1);
                }
                if list {
                    println!("  {name}: {} bins {ms:.2} ms", out.boxes.len());
                }
                bins += out.boxes.len() as u32;
                instances += 1;
                sum_ms += ms;
                max_ms = max_ms.max(ms);
            }
            let l2 = if generated_per_group > 0 {
                0
            } else {
                L2[ci][ni]
            };
            println!(
                "{class:>5} {n:>5} {bins:>6} {l2:>6} {:>9.2} {max_ms:>7.2}",
                sum_ms / per_group as f64
            );
            total += bins;
            total_l2 += l2;
            total_ms += sum_ms;
        }
    }
    println!(
        "total       {total:>6} {total_l2:>6} {:>9.2}   (EP heuristic reference ~7465)",
        total_ms / f64::from(instances.max(1))
    );
    println!("engine CPU per pass of the set: {cpu:.4} s (this thread; least noisy with --repeat)");
    Ok(())
}

/// The allocator of the Python extension (`cartonize-py`), so engine figures
/// match the service's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
