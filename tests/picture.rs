//! The picture of a run as a browser draws it: the SVG that `zklab replay --svg` and `zklab
//! check --svg` write is a sequence diagram no wider than 1,400 pixels, which headless Chromium
//! renders not blank, with the holders' bars, the faults and the violation in their colours. The
//! herd's picture draws the deletion that woke the herd as a fan of wake-up arrows. The picture
//! loads nothing: no script, no link. Each screenshot is kept, for a person to look at, under
//! `pictures/` in the target directory's `tmp/`.
//!
//! Chromium is Debian's `chromium`, which `.ci/run` installs; with `ZKLAB_REQUIRE_CHROMIUM=1` a
//! missing browser fails these tests instead of skipping them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The colours the picture gives holders' bars, faults' bands and the violation.
const HOLDER: [u8; 3] = [0x2f, 0x9e, 0x44];
const FAULT: [u8; 3] = [0xfd, 0xe0, 0xe0];
const VIOLATION: [u8; 3] = [0xff, 0x9c, 0x9c];

/// The widest a picture may be.
const WIDEST: u32 = 1400;

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

/// Where a test's screenshot is kept.
fn screenshot(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pictures");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{test}.png"))
}

fn zklab(args: &[&str]) -> i32 {
    let output = Command::new(env!("CARGO_BIN_EXE_zklab"))
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .expect("zklab runs");
    output.status.code().expect("zklab exits")
}

/// How many pixels of each colour `svg` shows once `browser` has drawn it into `shot` at
/// `width` by `height`: (every pixel, not white, holders, faults, violation).
fn drawn(browser: &Path, svg: &Path, shot: &Path, width: u32, height: u32) -> [usize; 5] {
    let dir = svg.parent().unwrap();
    let _ = std::fs::remove_file(shot);
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
            &format!("--screenshot={}", shot.display()),
        ])
        .arg(format!("file://{}", svg.display()))
        .output()
        .expect("chromium runs");
    assert!(shot.is_file(), "no screenshot: {status:?}");
    println!("screenshot: {}", shot.display());
    let decoder = png::Decoder::new(std::fs::File::open(shot).unwrap());
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

/// The number attribute `attribute` of the element `element` starts with.
fn number(element: &str, attribute: &str) -> f64 {
    let tag = &element[..element.find('>').unwrap()];
    let from = tag.find(&format!(" {attribute}=\"")).unwrap() + attribute.len() + 3;
    let digits: String = (tag[from..].chars())
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    digits.parse().unwrap()
}

/// What `zklab` with `args` and `--svg FILE` drew (it must exit 1: a violation to draw), once
/// checked that it loads nothing and fits the width: the SVG's text, and its colours as
/// `browser` draws it whole, its screenshot kept as `test`'s.
fn picture_of(browser: &Path, test: &str, args: &[&str]) -> (String, [usize; 5]) {
    let dir = scratch(test);
    let svg = dir.join("picture.svg");
    let code = zklab(&[args, &["--svg", svg.to_str().unwrap()]].concat());
    assert_eq!(code, 1, "{args:?}: a violation to draw");
    self_contained(&svg);
    let text = std::fs::read_to_string(&svg).unwrap();
    let (width, height) = (number(&text, "width"), number(&text, "height"));
    assert!(width <= f64::from(WIDEST), "{width} pixels wide");
    let counts = drawn(browser, &svg, &screenshot(test), WIDEST, height as u32);
    let _ = std::fs::remove_dir_all(dir);
    (text, counts)
}

/// The group of `svg` that opens with `start`, up to its end.
fn group<'s>(svg: &'s str, start: &str) -> &'s str {
    let from = svg.find(start).unwrap_or_else(|| panic!("no {start}"));
    &svg[from..from + svg[from..].find("</g>").unwrap()]
}

#[test]
fn the_herds_picture_draws_the_fan_of_wake_ups() {
    let Some(browser) = browser() else { return };
    let args = ["replay", "lock-bug-herd", "--seed", "0"];
    let (svg, counts) = picture_of(&browser, "herd", &args);
    // The headline names the deletion; its change is drawn as one fan, an arrow per watcher
    // it woke, each to a watch event the woken client received.
    let headline = group(&svg, "<g class=\"headline\">");
    let deleting = headline
        .split("deleting ")
        .nth(1)
        .expect("the herd's deletion");
    let node = deleting.split(' ').next().unwrap();
    let fan = group(&svg, "<g class=\"notify blamed\">");
    assert!(fan.contains(&format!("!! deleting {node} ")), "{fan}");
    let wakes = fan.matches("<line class=\"wake\"").count();
    assert!(wakes >= 2, "the herd is {wakes} arrows: {fan}");
    assert!(
        !fan.contains(" lost\""),
        "every woken watcher heard of it: {fan}"
    );
    // The picture goes on past the violation's row: replies are drawn below it.
    let band = group(&svg, "<g class=\"violation\">");
    let band = number(&band[band.find("<rect").unwrap()..], "y");
    let below = (svg
        .match_indices("<line class=\"reply\"")
        .map(|(at, _)| number(&svg[at..], "y2")))
    .filter(|y| *y > band)
    .count();
    assert!(below >= 2, "{below} replies below the violation");
    let [all, inked, holders, faults, violation] = counts;
    assert!(inked * 20 > all, "{inked} of {all} pixels drawn: blank");
    assert!(holders > 500, "holders' bars: {holders}");
    assert!(faults > 100, "faults marked: {faults}");
    assert!(violation > 10_000, "the violation highlighted: {violation}");
}

#[test]
fn a_counterexamples_picture_shows_the_server_and_the_violation() {
    let Some(browser) = browser() else { return };
    let args = ["check", "lock-bug-blind-retry", "--clients", "2"];
    let (svg, counts) = picture_of(&browser, "counterexample", &args);
    // The model's server has a lane, with what it applied.
    assert!(svg.contains("<title>ZooKeeper server</title>"), "{svg}");
    assert!(svg.contains("s2 create, reply lost</text>"), "{svg}");
    assert!(svg.contains("<line class=\"request\""), "{svg}");
    assert!(svg.contains("<line class=\"reply lost\""), "{svg}");
    let [all, inked, _, faults, violation] = counts;
    assert!(inked * 20 > all, "{inked} of {all} pixels drawn: blank");
    assert!(faults > 100, "the lost reply marked: {faults}");
    assert!(violation > 10_000, "the violation highlighted: {violation}");
}
