//! Records the build time so responses can report `built`.

use std::time::{SystemTime, UNIX_EPOCH};

fn main() {
    // SOURCE_DATE_EPOCH keeps reproducible builds reproducible.
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0)
        });
    println!("cargo:rustc-env=CARTONIZE_BUILT={secs}");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    println!("cargo:rerun-if-changed=src");
}
