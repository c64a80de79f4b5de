//! Refuses to build the simulator without `--cfg madsim`, before anything else is compiled.
//! Without the flag madsim is tokio under another name and nothing would be simulated; the flag
//! most often goes missing because an environment `RUSTFLAGS` replaced the flags the cargo
//! configuration gives, so say how to give it either way.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    if std::env::var_os("CARGO_CFG_MADSIM").is_some() {
        return;
    }
    let given = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let given = given.split('\x1f').collect::<Vec<_>>().join(" ");
    eprintln!(
        "zklab's simulator needs `--cfg madsim`, and rustc got the flags [{given}].

In a crate that tests with zklab, give the flag to the simulated tests alone (never to a
production build), with this alias in `.cargo/config.toml`, and run `cargo simtest`:

[alias]
simtest = [
    \"test\",
    \"--config\", \"build.rustflags = ['--cfg', 'madsim']\",
    \"--config\", \"env.ZKLAB_CARGO_TEST = 'simtest'\",
    \"--target-dir\", \"target/sim\",
]

An environment RUSTFLAGS replaces the flags the configuration gives. If it is set, add the flag
to it instead: RUSTFLAGS=\"$RUSTFLAGS --cfg madsim\" cargo test --target-dir target/sim"
    );
    std::process::exit(1);
}
