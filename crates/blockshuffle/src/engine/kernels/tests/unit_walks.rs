//! The tiles no kernel takes, walked as a nest of their units
//! (`tile::unit_tiles`), where their destination rows share the
//! first-level cache's sets: against each unit's offsets (`tile_oracle`).

use super::*;

/// Walks of source rows into more streams than a set's ways (8 in the
/// first levels measured; on one of 12, 9 streams are walked as others),
/// every stream's line in one set (rows a whole number of 4 KiB apart), go a
/// line of each stream at a time where the tile has a line's worth of
/// rows: deinterleaves of 16-byte units (source rows one run, walked in
/// the source's order) into 9 and 16 streams, rows of 1 to 11 units (none,
/// one or two chunks of 4, and what is left of them), and tiles of 8-byte
/// units with more streams than rows (20 streams of 8 to 17 units, source
/// rows apart); rows 4 and 8 KiB apart, once and repeated (continuing the
/// destination rows, or apart); and, the same tiles 64 bytes off the
/// sets' span, walked a unit of each stream at a time. Every kernel set,
/// through the cache and streamed, the bytes between units left alone.
#[test]
fn walks_whose_streams_share_a_cache_set_go_a_line_of_each_at_a_time() {
    let deinterleaves = [9, 16].into_iter().flat_map(|nx| [1, 3, 4, 5, 8, 11].map(|ny| (16, nx, ny, 0)));
    let more_streams = [8, 9, 16, 17].map(|ny| (8, 20, ny, 24));
    for (unit, nx, ny, apart) in deinterleaves.chain(more_streams) {
        for dsx in [4096, 8192, 4096 + 64] {
            let ssy = (nx * unit + apart) as isize;
            for rows in [
                Rows::ONE,
                Rows { count: 3, ss: ny as isize * ssy, ds: (ny * unit) as isize },
                Rows { count: 2, ss: ny as isize * ssy + 48, ds: (ny * unit + 32) as isize },
            ] {
                let what = format!("{nx} streams of {ny} units of {unit} bytes, {dsx} apart, {rows:?}");
                check_repeated_tile(rows, nx, ny, ssy, dsx, unit, 9, 0x5A, true, &what);
            }
        }
    }
}
