//! XProf's colours for utilisation (`flameColor`, `flopsColor`, `bwColor` in its `utils.ts`): red
//! through yellow to green as FLOPS utilisation rises, and the other way round for memory bandwidth
//! (a memory-bound op is the one to look at), grey where there is no figure. Plain maths with no web
//! dependency (`tests/ui_geometry.rs` runs it natively).

/// `rgba(r,g,b,1)` with each channel in 0–1 rounded to 0–255, as XProf writes it.
fn rgba(r: f64, g: f64, b: f64) -> String {
    let c = |v: f64| (v * 255.0).round() as i64;
    format!("rgba({},{},{},1)", c(r), c(g), c(b))
}

/// XProf's flame colour of `fraction` (0–1) at `brightness`, after a square-root curve: red below a
/// quarter, yellow at a quarter, green at 1.
fn flame(fraction: Option<f64>, brightness: f64) -> String {
    let Some(f) = fraction.filter(|f| !f.is_nan()) else { return rgba(brightness, brightness, brightness) };
    let f = f.sqrt();
    if f < 0.5 {
        rgba(brightness, 2.0 * f * brightness, 0.0)
    } else {
        rgba(2.0 * (1.0 - f) * brightness, brightness, 0.0)
    }
}

/// The colour of a FLOPS utilisation (capped at 1, as XProf's `flopsColor`).
pub fn flops_color(utilization: Option<f64>) -> String {
    flame(utilization.map(|u| u.clamp(0.0, 1.0)), 0.7)
}

/// The colour of a memory bandwidth utilisation (XProf's `bwColor`).
pub fn bandwidth_color(utilization: Option<f64>) -> String {
    flame(utilization.map(|u| (1.0 - u).max(0.0)), 0.7)
}
