//! Tick cost through the C ABI batch call: nanoseconds per entity for
//! 1 k, 10 k and 100 k entities, and heap allocations per tick (counted by
//! a wrapping global allocator; steady state must be zero).
//!
//! Run: cargo bench --bench tick_cost

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use netsync::ffi::result::NetsyncResult;
use netsync::ffi::timeline::*;
use netsync::ffi::types::*;

struct Counting;
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn samples(n: usize, t: f64, out: &mut Vec<NetsyncSample>) {
    out.clear();
    for id in 0..n {
        let a = (t + id as f64 * 0.001) as f32;
        out.push(NetsyncSample {
            entity_id: id as u64,
            position: NetsyncVec3 {
                x: a.cos() * 10.0,
                y: 0.0,
                z: a.sin() * 10.0,
            },
            rotation: NetsyncQuat {
                x: 0.0,
                y: (a * 0.5).sin(),
                z: 0.0,
                w: (a * 0.5).cos(),
            },
            linear_velocity: NetsyncVec3 {
                x: -a.sin() * 10.0,
                y: 0.0,
                z: a.cos() * 10.0,
            },
            angular_velocity: NetsyncVec3 {
                x: 0.0,
                y: 1.0,
                z: 0.0,
            },
            flags: NETSYNC_SAMPLE_HAS_VELOCITY | NETSYNC_SAMPLE_HAS_ANGULAR_VELOCITY,
        });
    }
}

const RUNS: usize = 5;

struct Figures {
    tick_ns_per_entity_median: f64,
    push_ns_per_sample: f64,
    allocations_per_tick: f64,
}

fn measure(n: usize, mode: u32) -> Figures {
    let mut config = unsafe { std::mem::zeroed::<NetsyncTimelineConfig>() };
    assert_eq!(
        netsync_timeline_config_default(&mut config),
        NetsyncResult::NETSYNC_OK
    );
    config.mode = mode;
    let mut tl = std::ptr::null_mut();
    assert_eq!(
        netsync_timeline_new(&config, &mut tl),
        NetsyncResult::NETSYNC_OK
    );
    let mut out = vec![NetsyncTransform::default(); n];
    let mut batch = Vec::with_capacity(n);
    let mut count = 0usize;
    let latency = 0.05;
    let mut frame = 0u64;
    let mut now = 0.0f64;
    let mut tick_ns = Vec::new();
    let mut push_ns = 0.0;
    let mut pushed = 0u64;
    let (mut allocs, mut counted_ticks) = (0u64, 0u64);
    let ticks = if n >= 100_000 { 120 } else { 360 };
    for i in 0..ticks + 120 {
        // 20 Hz snapshots arriving 50 ms late, 60 fps ticks.
        while (frame as f64) * 0.05 + latency <= now {
            let st = frame as f64 * 0.05;
            samples(n, st, &mut batch);
            let start = Instant::now();
            let r = netsync_timeline_push(tl, st + latency, st, batch.as_ptr(), n);
            push_ns += start.elapsed().as_nanos() as f64;
            pushed += n as u64;
            assert_eq!(r, NetsyncResult::NETSYNC_OK);
            frame += 1;
        }
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let start = Instant::now();
        let r = netsync_timeline_tick(tl, now, out.as_mut_ptr(), n, &mut count);
        let elapsed = start.elapsed().as_nanos() as f64;
        let after = ALLOCATIONS.load(Ordering::Relaxed);
        assert_eq!(r, NetsyncResult::NETSYNC_OK);
        if i >= 120 {
            // Steady state: buffers have reached their working size.
            tick_ns.push(elapsed / n as f64);
            allocs += after - before;
            counted_ticks += 1;
        }
        now += 1.0 / 60.0;
    }
    assert_eq!(count, n);
    netsync_timeline_free(tl);
    tick_ns.sort_by(f64::total_cmp);
    Figures {
        tick_ns_per_entity_median: tick_ns[tick_ns.len() / 2],
        push_ns_per_sample: push_ns / pushed as f64,
        allocations_per_tick: allocs as f64 / counted_ticks as f64,
    }
}

fn main() {
    // `--quick`: one run of 1 000 entities per mode, exits non-zero on any
    // allocation per tick (the test command's smoke run).
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes: &[usize] = if std::env::args().any(|a| a == "--only") {
        &[1_000, 10_000, 100_000]
    } else if quick {
        &[1_000]
    } else {
        &[1_000, 10_000, 100_000]
    };
    // `--only MODE:N` measures one case (for profiling).
    let only: Option<(String, usize)> = std::env::args()
        .skip_while(|a| a != "--only")
        .nth(1)
        .and_then(|v| {
            v.split_once(':')
                .map(|(m, n)| (m.to_string(), n.parse().unwrap_or(10_000)))
        });
    println!(
        "netsync tick cost through netsync_timeline_tick (ns per entity, 60 fps, 20 Hz snapshots)"
    );
    println!();
    println!("| mode | entities | tick, best run (ns/entity) | tick, median run (ns/entity) | tick per frame, best (us) | push (ns/sample) | allocations per tick (worst run) |");
    println!("|---|---|---|---|---|---|---|");
    for (name, mode) in [
        ("adaptive", NETSYNC_MODE_ADAPTIVE),
        ("fixed", NETSYNC_MODE_FIXED),
        ("predicted", NETSYNC_MODE_PREDICTED),
    ] {
        for &n in sizes {
            if let Some((m, size)) = &only {
                if m != name || *size != n {
                    continue;
                }
            }
            // The machine is shared: repeat and keep the quietest run,
            // reporting the median run too so that noise shows.
            let repeats = if quick { 1 } else { RUNS };
            let mut runs: Vec<Figures> = (0..repeats).map(|_| measure(n, mode)).collect();
            runs.sort_by(|a, b| {
                a.tick_ns_per_entity_median
                    .total_cmp(&b.tick_ns_per_entity_median)
            });
            let best = &runs[0];
            let typical = &runs[runs.len() / 2];
            let allocations = runs
                .iter()
                .map(|r| r.allocations_per_tick)
                .fold(0.0, f64::max);
            if quick && allocations > 0.0 {
                eprintln!("error: {name} allocated {allocations} times per tick in steady state");
                std::process::exit(1);
            }
            println!(
                "| {name} | {n} | {:.1} | {:.1} | {:.0} | {:.1} | {:.2} |",
                best.tick_ns_per_entity_median,
                typical.tick_ns_per_entity_median,
                best.tick_ns_per_entity_median * n as f64 / 1000.0,
                best.push_ns_per_sample,
                allocations
            );
        }
    }
}
