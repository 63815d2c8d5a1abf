//! A kernel's launch parameters, from the `kernel_details` stat the GPU tracer writes on each kernel
//! event: space- or newline-separated `key:value` tokens, e.g.
//! `regs:38 static_shared:0 dynamic_shared:0 grid:160,1,1 block:1024,1,1 occ_pct:50`.

/// Launch parameters; a dimension not given (or malformed) is 1, anything else not given is 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaunchParams {
    pub registers_per_thread: u32,
    pub static_shmem_bytes: u32,
    pub dynamic_shmem_bytes: u32,
    pub block_dim: [u32; 3],
    pub grid_dim: [u32; 3],
    pub occupancy_pct: f64,
}

impl Default for LaunchParams {
    fn default() -> Self {
        LaunchParams {
            registers_per_thread: 0,
            static_shmem_bytes: 0,
            dynamic_shmem_bytes: 0,
            block_dim: [1; 3],
            grid_dim: [1; 3],
            occupancy_pct: 0.0,
        }
    }
}

/// Parses `details` as XProf does: tokens that are not exactly `key:value`, unknown keys (AMD's
/// `private_mem`, `group_mem`) and values that do not parse are ignored; a later token overrides an
/// earlier one.
pub fn parse(details: &str) -> LaunchParams {
    let mut p = LaunchParams::default();
    for token in details.split([' ', '\n']) {
        let mut parts = token.split(':');
        let (Some(key), Some(value), None) = (parts.next(), parts.next(), parts.next()) else { continue };
        match key {
            "regs" => set(&mut p.registers_per_thread, value),
            "static_shared" => set(&mut p.static_shmem_bytes, value),
            "dynamic_shared" => set(&mut p.dynamic_shmem_bytes, value),
            "block" => set_dims(&mut p.block_dim, value),
            "grid" => set_dims(&mut p.grid_dim, value),
            "occ_pct" => {
                if let Ok(v) = value.parse() {
                    p.occupancy_pct = v;
                }
            }
            _ => {}
        }
    }
    p
}

fn set(field: &mut u32, value: &str) {
    if let Ok(v) = value.parse() {
        *field = v;
    }
}

/// Three comma-separated dimensions, all of which must parse, or the dimensions stay as they were.
fn set_dims(dims: &mut [u32; 3], value: &str) {
    let parsed: Vec<Option<u32>> = value.split(',').map(|v| v.parse().ok()).collect();
    if let [Some(x), Some(y), Some(z)] = parsed[..] {
        *dims = [x, y, z];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvidia_details() {
        let p = parse("regs:38 static_shared:16 dynamic_shared:32 grid:160,1,1 block:1024,1,1 occ_pct:50.5");
        assert_eq!(
            p,
            LaunchParams {
                registers_per_thread: 38,
                static_shmem_bytes: 16,
                dynamic_shmem_bytes: 32,
                block_dim: [1024, 1, 1],
                grid_dim: [160, 1, 1],
                occupancy_pct: 50.5
            }
        );
    }

    #[test]
    fn amd_details_and_malformed_tokens() {
        let p = parse(" grid:16,1,1 block:512,1,1 private_mem:0 group_mem:49280 occ_pct:0");
        assert_eq!((p.grid_dim, p.block_dim, p.static_shmem_bytes + p.dynamic_shmem_bytes), ([16, 1, 1], [512, 1, 1], 0));
        let p = parse("regs:-1 grid:1,2 block:a,b,c x:y:z\nregs:7");
        assert_eq!((p.registers_per_thread, p.grid_dim, p.block_dim), (7, [1, 1, 1], [1, 1, 1]));
    }
}
