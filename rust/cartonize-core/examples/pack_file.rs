//! Packs an engine input JSON file and prints a summary: `cargo run --release --example pack_file FILE`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: pack_file FILE")?;
    let text = std::fs::read_to_string(path)?;
    let input: cartonize_core::PackInput = serde_json::from_str(&text)?;
    let out = cartonize_core::pack(&input)?;
    println!(
        "boxes {} leftovers {} pack_time {:.4}s sort {}",
        out.boxes.len(),
        out.leftovers.len(),
        out.pack_time,
        out.item_sort_used
    );
    Ok(())
}
