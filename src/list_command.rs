//! `zklab list`: the catalogue, one scenario a line, or as the Markdown table the README shows.

use std::process::ExitCode;

use clap::Args;
use zklab::scenarios::catalogue;
use zklab::scenarios::scenario::Scenario;

/// The options of `list`.
#[derive(Args)]
pub(crate) struct ListArgs {
    /// Print the catalogue as a Markdown table, exactly as README.md shows it (a test compares
    /// the two).
    #[arg(long)]
    markdown: bool,
}

/// Prints the catalogue; exit status 0.
pub(crate) fn run(args: &ListArgs) -> ExitCode {
    let scenarios: Vec<&Scenario> = catalogue::scenarios().collect();
    if args.markdown {
        print!("{}", markdown_table(&scenarios));
    } else {
        print!("{}", plain_list(&scenarios));
    }
    ExitCode::SUCCESS
}

/// One line a scenario: its name, padded to the longest, then what it exercises, and a tag on
/// a known bug.
fn plain_list(scenarios: &[&Scenario]) -> String {
    let width = scenarios.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let mut text = String::new();
    for scenario in scenarios {
        let tag = if scenario.bug.is_some() {
            " (known bug: expected to fail)"
        } else {
            ""
        };
        let name = scenario.name;
        text.push_str(&format!("{name:<width$}  {}{tag}\n", scenario.about));
    }
    text
}

/// The catalogue as a Markdown table: the scenario, whether a sweep is expected to hold or to
/// fail (a known bug), and what it exercises.
fn markdown_table(scenarios: &[&Scenario]) -> String {
    let mut text =
        String::from("| scenario | expected | what it exercises |\n| --- | --- | --- |\n");
    for scenario in scenarios {
        let expected = if scenario.bug.is_some() {
            "fails: known bug"
        } else {
            "holds"
        };
        text.push_str(&format!(
            "| `{}` | {expected} | {} |\n",
            scenario.name,
            cell(scenario.about),
        ));
    }
    text
}

/// Text made safe for a table cell: a `|` would end the cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_a_row_per_scenario_and_marks_known_bugs() {
        let scenarios: Vec<&Scenario> = catalogue::scenarios().collect();
        let table = markdown_table(&scenarios);
        let rows: Vec<&str> = table.lines().skip(2).collect();
        assert_eq!(rows.len(), scenarios.len());
        for (row, scenario) in rows.iter().zip(&scenarios) {
            assert!(
                row.starts_with(&format!("| `{}` |", scenario.name)),
                "{row}"
            );
            assert_eq!(row.contains("known bug"), scenario.bug.is_some(), "{row}");
        }
    }

    #[test]
    fn a_bar_in_a_cell_is_escaped() {
        assert_eq!(cell("a | b"), "a \\| b");
    }
}
