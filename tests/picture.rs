//! The picture of a run as a browser draws it: the SVG that `zklab replay --svg` and `zklab
//! check --svg` write, rendered by headless Chromium, is not blank, and shows the holders'
//! shading, the faults and the violation in their colours. The picture loads nothing: no
//! script, no link.
//!
//! Chromium is Debian's `chromium`, which `.ci/run` installs; with `ZKLAB_REQUIRE_CHROMIUM=1` a
//! missing browser fails these tests instead of skipping them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The colours the picture gives holders, faults and the violation.
const HOLDER: [u8; 3] = [0xc8, 0xec, 0xc8];
const FAULT: [u8; 3] = [0xfd, 0xe0, 0xe0];
const VIOLATION: [u8; 3] = [0xff, 0x9c, 0x9c];

fn browser() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::split_paths(&std::env::var_os("PATH")?)
                .map(|dir| dir.join(name))
                .find(|path| path.is_file())
        });
    if found.is_none() {
        assert!(
            std::env::var_os("ZKLAB_REQUIRE_CHROMIUM").is_none(),
            "ZKLAB_REQUIRE_CHROMIUM is set but no chromium is installed"
        );
        eprintln!("skipped: no chromium on PATH (apt-get install chromium)");
    }
    found
}

/// A fresh directory for one test's files.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zklab-picture-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn zklab(args: &[&str]) -> i32 {
    let output = Command::new(env!("CARGO_BIN_EXE_zklab"))
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .expect("zklab runs");
    output.status.code().expect("zklab exits")
}

/// How many pixels of each colour `svg` shows once `browser` has drawn it at `width` by
/// `height`: (every pixel, not white, holders, faults, violation).
fn drawn(browser: &Path, svg: &Path, width: u32, height: u32) -> [usize; 5] {
    let dir = svg.parent().unwrap();
    let png = dir.join("drawn.png");
    let status = Command::new("timeout")
        .arg("120")
        .arg(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            &format!("--user-data-dir={}", dir.join("profile").display()),
            &format!("--window-size={width},{height}"),
            &format!("--screenshot={}", png.display()),
        ])
        .arg(format!("file://{}", svg.display()))
        .output()
        .expect("chromium runs");
    assert!(png.is_file(), "no screenshot: {status:?}");
    let decoder = png::Decoder::new(std::fs::File::open(&png).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let channels = info.color_type.samples();
    let mut counts = [0; 5];
    for pixel in pixels[..info.buffer_size()].chunks(channels) {
        let rgb = [pixel[0], pixel[1], pixel[2]];
        counts[0] += 1;
        counts[1] += usize::from(rgb != [0xff; 3]);
        counts[2] += usize::from(rgb == HOLDER);
        counts[3] += usize::from(rgb == FAULT);
        counts[4] += usize::from(rgb == VIOLATION);
    }
    counts
}

/// The picture fetches nothing and runs nothing.
fn self_contained(svg: &Path) {
    let text = std::fs::read_to_string(svg).unwrap();
    assert!(text.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(
        !text.contains("<script") && !text.contains("href"),
        "{text}"
    );
    assert_eq!(text.matches("http").count(), 1, "only the SVG namespace");
}

/// Runs zklab with `args` and `--svg FILE` (it must exit 1: a violation to draw), checks the
/// picture loads nothing, and counts its colours as `browser` draws it at `width` by `height`.
fn picture_of(browser: &Path, test: &str, args: &[&str], width: u32, height: u32) -> [usize; 5] {
    let dir = scratch(test);
    let svg = dir.join("picture.svg");
    let code = zklab(&[args, &["--svg", svg.to_str().unwrap()]].concat());
    assert_eq!(code, 1, "{args:?}: a violation to draw");
    self_contained(&svg);
    let counts = drawn(browser, &svg, width, height);
    let _ = std::fs::remove_dir_all(dir);
    counts
}

#[test]
fn a_replays_picture_renders_with_holders_faults_and_the_violation() {
    let Some(browser) = browser() else { return };
    let args = ["replay", "lock-bug-herd", "--seed", "0"];
    // Tall enough to reach the violation, 128 rows down.
    let [all, inked, holders, faults, violation] =
        picture_of(&browser, "replay", &args, 2100, 2600);
    assert!(inked * 50 > all, "{inked} of {all} pixels drawn: blank");
    assert!(holders > 1000, "holders shaded: {holders}");
    assert!(faults > 100, "faults marked: {faults}");
    assert!(violation > 1000, "the violation highlighted: {violation}");
}

#[test]
fn a_counterexamples_picture_renders_with_the_violation() {
    let Some(browser) = browser() else { return };
    let args = ["check", "lock-bug-blind-retry", "--clients", "2"];
    let [all, inked, _, faults, violation] = picture_of(&browser, "check", &args, 1200, 900);
    assert!(inked * 50 > all, "{inked} of {all} pixels drawn: blank");
    assert!(faults > 100, "the lost reply marked: {faults}");
    assert!(violation > 1000, "the violation highlighted: {violation}");
}
