//! Not gated on `cfg(madsim)` on purpose: if an environment RUSTFLAGS replaced the workspace's
//! `--cfg madsim`, every simulator test would compile to nothing and pass. This one fails instead.

#[test]
#[allow(
    clippy::assertions_on_constants,
    reason = "the constant is the build's cfg: that is the point"
)]
fn the_simulator_is_compiled_in() {
    assert!(
        cfg!(madsim) && zklab::SIMULATOR_ENABLED,
        "built without --cfg madsim: unset RUSTFLAGS, which replaces .cargo/config.toml's rustflags"
    );
}
