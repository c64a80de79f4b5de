//! A crate that uses zklab but was built without `--cfg madsim` (no `.cargo/config.toml`, or an
//! environment RUSTFLAGS that replaced it) must not compile to a harness that simulates nothing:
//! it fails with one error that says what to write, and it never compiles the command line's
//! dependencies.

use std::fs;
use std::path::Path;
use std::process::Command;

#[test]
fn a_crate_built_without_the_cfg_gets_one_error_saying_what_to_write() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let user = std::env::temp_dir().join(format!("zklab-user-{}", std::process::id()));
    fs::create_dir_all(user.join("src")).unwrap();
    let manifest = format!(
        "[package]\nname = \"uses-zklab\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
         [dependencies]\nzklab = {{ path = {:?}, default-features = false }}\n\n[workspace]\n",
        repo.display()
    );
    fs::write(user.join("Cargo.toml"), manifest).unwrap();
    fs::write(
        user.join("src/lib.rs"),
        "pub use zklab::testing::Harness;\n",
    )
    .unwrap();
    // The same versions as the workspace's. Not `--offline`: built without the cfg, madsim wants
    // crates of its own (tokio-util) that the workspace's build never downloads.
    fs::copy(repo.join("Cargo.lock"), user.join("Cargo.lock")).unwrap();

    // Outside the repository, so that its `.cargo/config.toml` does not apply.
    let cargo = |args: &[&str]| {
        Command::new(env!("CARGO"))
            .args(args)
            .current_dir(&user)
            .env("CARGO_TARGET_DIR", repo.join("target/without-madsim"))
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CARGO_BUILD_RUSTFLAGS")
            .output()
            .unwrap()
    };
    let output = cargo(&["check", "--color=never"]);
    let tree = cargo(&["tree", "--edges=normal", "--prefix=none"]);
    let _ = fs::remove_dir_all(&user);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("error"))
        .collect();
    assert_eq!(
        errors,
        [
            "error: zklab's simulator needs `--cfg madsim`. Put this in `.cargo/config.toml` at \
             the root of your workspace (and leave RUSTFLAGS unset, which replaces it):",
            "error: could not compile `zklab-sim` (lib) due to 1 previous error",
        ],
        "{stderr}"
    );
    assert!(
        stderr.contains(r#"rustflags = ["--cfg", "madsim"]"#),
        "{stderr}"
    );
    let tree = String::from_utf8_lossy(&tree.stdout);
    assert!(tree.contains("zklab-sim "), "{tree}");
    for cli_only in ["clap ", "mimalloc ", "proptest "] {
        assert!(
            !tree.lines().any(|line| line.starts_with(cli_only)),
            "a user builds {cli_only}: {tree}"
        );
    }
}
