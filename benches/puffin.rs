//! Deletion vectors: deserializing a `deletion-vector-v1` blob of 1,000,000 random
//! positions (10% of a 10,000,000-row data file) and building keep masks over it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use icefloe::puffin::DeletionVector;

const ROWS: u64 = 10_000_000;
const DELETED: usize = 1_000_000;

/// 1,000,000 distinct positions below 10,000,000, from a fixed-seed xorshift.
fn random_dv() -> DeletionVector {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut dv = DeletionVector::new();
    while (dv.cardinality() as usize) < DELETED {
        for _ in 0..(DELETED - dv.cardinality() as usize) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            dv.insert((state % ROWS) as i64).unwrap();
        }
    }
    dv
}

fn bench(c: &mut Criterion) {
    let dv = random_dv();
    let blob = dv.serialize().unwrap();
    let mut g = c.benchmark_group("deletion_vector");
    g.throughput(Throughput::Elements(DELETED as u64));
    g.bench_function("deserialize_1M_of_10M", |b| {
        b.iter(|| DeletionVector::deserialize(black_box(&blob)).unwrap())
    });
    g.bench_function("serialize_1M_of_10M", |b| {
        b.iter(|| black_box(&dv).serialize().unwrap())
    });
    g.bench_function("from_positions_1M_sorted", |b| {
        let positions: Vec<i64> = dv.iter().collect();
        b.iter(|| DeletionVector::from_positions(black_box(&positions).iter().copied()).unwrap())
    });
    g.throughput(Throughput::Elements(1_000_000));
    g.bench_function("keep_mask_1M_rows", |b| {
        b.iter(|| black_box(&dv).keep_mask(black_box(4_000_000), 1_000_000))
    });
    g.bench_function("keep_mask_buffer_1M_rows", |b| {
        b.iter(|| black_box(&dv).keep_mask_buffer(black_box(4_000_000), 1_000_000))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
