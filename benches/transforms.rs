//! Partition transform benchmarks: bucket[16] on long and string, truncate[4] on string,
//! each as a scalar loop and through the Arrow vectorized path, over 1M values.
//!
//! Run: `cargo bench -p icefloe --bench transforms -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::io::Cursor;

use arrow_array::{Int64Array, StringArray};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use icefloe::arrow::transform_array;
use icefloe::spec::transform::{bucket_bytes, bucket_i64, truncate_str};
use icefloe::spec::{PrimitiveType, Transform};

const N: usize = 1_000_000;

/// Deterministic pseudo-random numbers, so runs are comparable.
fn lcg(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        s >> 11
    }
}

fn longs() -> Vec<i64> {
    let mut next = lcg(1);
    (0..N).map(|_| next() as i64 - (1 << 52)).collect()
}

/// Strings of 5 to 24 characters, a tenth of them with multi-byte characters.
fn strings() -> Vec<String> {
    let mut next = lcg(2);
    (0..N)
        .map(|i| {
            let len = 5 + (next() % 20) as usize;
            (0..len)
                .map(|_| {
                    let c = next();
                    if i % 10 == 0 && c.is_multiple_of(3) {
                        '冰'
                    } else {
                        char::from(b'a' + (c % 26) as u8)
                    }
                })
                .collect()
        })
        .collect()
}

fn bucket_long(c: &mut Criterion) {
    let values = longs();
    let array = Int64Array::from(values.clone());
    let t = Transform::Bucket(16);
    let mut g = c.benchmark_group("bucket16_long");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("scalar_loop", |b| {
        b.iter(|| {
            let mut acc = 0i64;
            for v in black_box(&values) {
                acc += i64::from(bucket_i64(*v, 16));
            }
            acc
        })
    });
    // The murmur3 crate through its Read-based API, to justify the hand-written hash.
    g.bench_function("scalar_loop_murmur3_crate", |b| {
        b.iter(|| {
            let mut acc = 0i64;
            for v in black_box(&values) {
                let h =
                    murmur3::murmur3_32(&mut Cursor::new(v.to_le_bytes()), 0).unwrap_or(0) as i32;
                acc += i64::from((h & i32::MAX) % 16);
            }
            acc
        })
    });
    g.bench_function("arrow", |b| {
        b.iter(|| transform_array(&t, &PrimitiveType::Long, black_box(&array)))
    });
    g.finish();
}

fn bucket_string(c: &mut Criterion) {
    let values = strings();
    let array = StringArray::from_iter_values(values.iter());
    let t = Transform::Bucket(16);
    let mut g = c.benchmark_group("bucket16_string");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("scalar_loop", |b| {
        b.iter(|| {
            let mut acc = 0i64;
            for v in black_box(&values) {
                acc += i64::from(bucket_bytes(v.as_bytes(), 16));
            }
            acc
        })
    });
    g.bench_function("arrow", |b| {
        b.iter(|| transform_array(&t, &PrimitiveType::String, black_box(&array)))
    });
    g.finish();
}

fn truncate_string(c: &mut Criterion) {
    let values = strings();
    let array = StringArray::from_iter_values(values.iter());
    let t = Transform::Truncate(4);
    let mut g = c.benchmark_group("truncate4_string");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("scalar_loop", |b| {
        b.iter(|| {
            let mut acc = 0usize;
            for v in black_box(&values) {
                acc += truncate_str(v, 4).len();
            }
            acc
        })
    });
    g.bench_function("arrow", |b| {
        b.iter(|| transform_array(&t, &PrimitiveType::String, black_box(&array)))
    });
    g.finish();
}

criterion_group!(benches, bucket_long, bucket_string, truncate_string);
criterion_main!(benches);
