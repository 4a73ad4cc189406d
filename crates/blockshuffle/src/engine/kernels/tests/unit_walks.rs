//! The tiles no kernel takes, walked as a nest of their units
//! (`tile::unit_tiles`), where their destination rows share the
//! first-level cache's sets: against each unit's offsets (`tile_oracle`).

use super::*;

/// Deinterleaves of 16-byte units (source rows one run, walked in the
/// source's order) into more streams than a set's ways, every stream's
/// line in one set (rows a whole number of 4 KiB apart), go a line of each
/// stream at a time: rows of 1 to 11 units (chunks of 4 and what is left
/// of them), 9 and 16 streams, rows 4 and 8 KiB apart, once and repeated
/// (continuing the destination rows, or apart); and, the same tiles 64
/// bytes off the sets' span, walked a unit of each stream at a time.
/// Every kernel set, through the cache and streamed, the bytes between
/// units left alone.
#[test]
fn deinterleaves_whose_streams_share_a_cache_set_go_a_line_of_each_at_a_time() {
    let unit = 16;
    for nx in [9, 16] {
        for ny in [1, 3, 4, 5, 8, 11] {
            for dsx in [4096, 8192, 4096 + 64] {
                let ssy = (nx * unit) as isize;
                for rows in [
                    Rows::ONE,
                    Rows { count: 3, ss: ny as isize * ssy, ds: (ny * unit) as isize },
                    Rows { count: 2, ss: ny as isize * ssy + 48, ds: (ny * unit + 32) as isize },
                ] {
                    let what = format!("{nx} streams of {ny} units, {dsx} apart, {rows:?}");
                    check_repeated_tile(rows, nx, ny, ssy, dsx, unit, 9, 0x5A, true, &what);
                }
            }
        }
    }
}

/// Which destination rows share a set: a whole number of 4 KiB apart and
/// more than 8 of them.
#[test]
fn rows_share_a_cache_set_a_whole_number_of_4_kib_apart_past_8_ways() {
    for (nx, dsx, shares) in [
        (9, 4096, true),
        (16, -8192, true),
        (9, 12288, true),
        (8, 4096, false),
        (9, 4096 + 64, false),
        (16, 2048, false),
        (9, 6144, false),
    ] {
        assert_eq!(shares_l1_set(nx, dsx), shares, "{nx} rows {dsx} apart");
    }
}
