//! examples/user_crate is a crate of one's own laid out as the README says: production code on
//! `zklab-recipes`, simulated tests on `zklab` with `default-features = false`, and the simulator's
//! flag given by a `cargo simtest` alias alone. Built as its user builds it: the production build
//! has no simulator in it; the harness builds without the model checker, the real client or the
//! command line; `cargo simtest` runs the simulated tests; an environment RUSTFLAGS that drops
//! the flag stops the build at once with a message that says what to do, and RUSTFLAGS that carry
//! it run the tests too.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The example copied outside the repository (whose own `.cargo/config.toml`, which gives the
/// flag to every build, would apply inside it), its paths to zklab made absolute, and its target
/// directory kept in the repository's, so that a later run builds only what changed.
fn user_crate() -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let example = repo.join("examples/user_crate");
    let user = std::env::temp_dir().join(format!("zklab-user-crate-{}", std::process::id()));
    let _ = fs::remove_dir_all(&user);
    for file in ["src/lib.rs", "tests/simulated.rs", ".cargo/config.toml"] {
        fs::create_dir_all(user.join(file).parent().unwrap()).unwrap();
        fs::copy(example.join(file), user.join(file)).unwrap();
    }
    let manifest = fs::read_to_string(example.join("Cargo.toml")).unwrap();
    let manifest = manifest
        .replace("\"../../recipes\"", &format!("{:?}", repo.join("recipes")))
        .replace("\"../..\"", &format!("{:?}", repo));
    fs::write(user.join("Cargo.toml"), manifest).unwrap();
    // The same versions as the workspace's.
    fs::copy(repo.join("Cargo.lock"), user.join("Cargo.lock")).unwrap();
    let target = repo.join("target/user-crate");
    fs::create_dir_all(&target).unwrap();
    std::os::unix::fs::symlink(&target, user.join("target")).unwrap();
    user
}

/// Runs cargo in `dir` with `args`, and `rustflags` as the environment's RUSTFLAGS if any.
fn cargo(dir: &Path, args: &[&str], rustflags: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO"));
    command.args(args).arg("--color=never").current_dir(dir);
    for variable in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET_DIR",
        "ZKLAB_SEEDS",
        "ZKLAB_SEED",
        "ZKLAB_CARGO_TEST",
    ] {
        command.env_remove(variable);
    }
    if let Some(flags) = rustflags {
        command.env("RUSTFLAGS", flags);
    }
    command.output().expect("cargo runs")
}

/// The crates a `cargo tree` lists, each once, by name.
fn crate_names(tree: &Output) -> Vec<String> {
    assert!(
        tree.status.success(),
        "{}",
        String::from_utf8_lossy(&tree.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&tree.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn a_users_crate_keeps_the_simulator_out_of_production_and_runs_its_simulated_tests() {
    let user = user_crate();
    let example_config = fs::read_to_string(user.join(".cargo/config.toml")).unwrap();
    let alias = &example_config[example_config.find("[alias]").unwrap()..];
    let readme = include_str!("../README.md");
    assert!(
        readme.contains(&format!("```toml\n{alias}```")),
        "the README shows another alias"
    );

    // Production: no simulator among its dependencies, and it builds without the flag.
    let production = crate_names(&cargo(
        &user,
        &["tree", "--edges=normal", "--prefix=none"],
        None,
    ));
    for simulator in ["madsim", "zklab", "zklab-sim"] {
        assert!(
            !production.iter().any(|name| name == simulator),
            "{production:?}"
        );
    }
    let built = cargo(&user, &["build"], None);
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );

    // The harness, as the simulated tests build it: no model checker, real client or CLI.
    let simulated_tree = [
        "tree",
        "--edges=normal,dev",
        "--prefix=none",
        "--config",
        "build.rustflags = ['--cfg', 'madsim']",
    ];
    let harness = crate_names(&cargo(&user, &simulated_tree, None));
    for heavy in [
        "stateright",
        "tiny_http",
        "zookeeper-client",
        "clap",
        "proptest",
    ] {
        assert!(
            !harness.iter().any(|name| name == heavy),
            "{heavy}: {harness:?}"
        );
    }
    println!("the harness's build: {} crates", harness.len());

    // RUSTFLAGS without the flag replace the alias's: the build stops with what to do.
    let dropped = cargo(&user, &["simtest", "--no-run"], Some("-C debug-assertions"));
    let stderr = String::from_utf8_lossy(&dropped.stderr);
    assert!(!dropped.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "zklab's simulator needs `--cfg madsim`, and rustc got the flags [-C debug-assertions]"
        ),
        "{stderr}"
    );
    let indented: String = alias.lines().map(|line| format!("  {line}\n")).collect();
    assert!(stderr.contains(indented.trim_end()), "{stderr}");
    assert!(
        stderr
            .contains(r#"RUSTFLAGS="$RUSTFLAGS --cfg madsim" cargo test --target-dir target/sim"#),
        "{stderr}"
    );

    // The alias runs the simulated tests; so do RUSTFLAGS that carry the flag.
    let simtest = cargo(&user, &["simtest", "--", "--nocapture"], None);
    let stdout = String::from_utf8_lossy(&simtest.stdout);
    let stderr = String::from_utf8_lossy(&simtest.stderr);
    assert!(simtest.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("test result: ok. 2 passed"), "{stdout}");
    assert!(stderr.contains("zklab: 200 seeds held"), "{stderr}");
    let flagged = ["test", "--target-dir", "target/sim"];
    let with_rustflags = cargo(&user, &flagged, Some("--cfg madsim"));
    let stdout = String::from_utf8_lossy(&with_rustflags.stdout);
    assert!(with_rustflags.status.success(), "{stdout}");
    assert!(stdout.contains("test result: ok. 2 passed"), "{stdout}");
    let _ = fs::remove_dir_all(&user);
}
