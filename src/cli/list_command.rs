//! `zklab list`: the catalogue, one scenario a line, as the Markdown table the README shows, or
//! as JSON for scripts.

use std::process::ExitCode;

use crate::scenarios::catalogue::Catalogue;
use crate::scenarios::scenario::{BeyondTheModel, Scenario};
use clap::Args;
use serde::Serialize;

use crate::cli::check_command::BudgetJson;

/// The options of `list`.
#[derive(Args)]
pub(crate) struct ListArgs {
    /// Print the catalogue as a Markdown table, exactly as README.md shows it (a test compares
    /// the two).
    #[arg(long, conflicts_with = "json")]
    markdown: bool,
    /// Print the catalogue as one JSON array: each scenario with its pinned state count and,
    /// for a known bug, the model in which the checker breaks it (clients, faults, property).
    #[arg(long)]
    json: bool,
}

/// Prints the catalogue; exit status 0.
pub(crate) fn run(args: &ListArgs, catalogue: &Catalogue) -> ExitCode {
    let scenarios: Vec<&Scenario> = catalogue.scenarios().collect();
    if args.markdown {
        out!("{}", markdown_table(&scenarios));
    } else if args.json {
        outln!("{}", catalogue_json(&scenarios));
    } else {
        out!("{}", plain_list(&scenarios));
    }
    ExitCode::SUCCESS
}

/// A scenario as `--json` prints it.
#[derive(Serialize)]
struct ScenarioJson<'s> {
    name: &'s str,
    about: &'s str,
    states: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    known_bug: Option<KnownBugJson<'s>>,
}

/// How a known bug is caught, as `--json` prints it.
#[derive(Serialize)]
struct KnownBugJson<'s> {
    /// The violations the simulator may report first.
    shows: Vec<&'s str>,
    /// The model that breaks `breaks`: `zklab check <name> --clients <clients> --faults ..`.
    clients: usize,
    faults: BudgetJson,
    breaks: &'s str,
    /// What it needs that the model lacks (`lagging-follower`,
    /// `watches-lost-with-the-connection`), if anything: there the model holds.
    beyond_the_model: Option<&'static str>,
}

fn catalogue_json(scenarios: &[&Scenario]) -> String {
    let json: Vec<ScenarioJson> = scenarios
        .iter()
        .map(|scenario| ScenarioJson {
            name: scenario.name,
            about: scenario.about,
            states: scenario.states,
            known_bug: scenario.bug.as_ref().map(|bug| KnownBugJson {
                shows: bug
                    .shows
                    .iter()
                    .map(|property| property.violation)
                    .collect(),
                clients: bug.clients,
                faults: BudgetJson::from(&bug.budget),
                breaks: bug.breaks,
                beyond_the_model: bug.beyond_the_model.map(BeyondTheModel::name),
            }),
        })
        .collect();
    serde_json::to_string(&json).expect("the catalogue is plain data")
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
    use crate::scenarios::catalogue;

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
    fn the_json_names_each_known_bugs_model() {
        let scenarios: Vec<&Scenario> = catalogue::scenarios().collect();
        let json: serde_json::Value =
            serde_json::from_str(&catalogue_json(&scenarios)).expect("valid JSON");
        let entries = json.as_array().expect("an array");
        assert_eq!(entries.len(), scenarios.len());
        let entry = |name: &str| {
            entries
                .iter()
                .find(|entry| entry["name"] == name)
                .unwrap_or_else(|| panic!("{name} listed"))
        };
        assert!(entry("lock").get("known_bug").is_none());
        let give_up = &entry("lock-bug-give-up")["known_bug"];
        assert_eq!(give_up["clients"], 2);
        assert_eq!(give_up["breaks"], "no stuck state");
        assert_eq!(give_up["shows"][0], "unowned-node");
        assert_eq!(give_up["faults"]["lost_reply"], 1);
        assert_eq!(give_up["faults"]["session_expiry"], 0);
        assert_eq!(
            entry("names-bug-no-sync")["known_bug"]["beyond_the_model"],
            "lagging-follower"
        );
        assert!(give_up["beyond_the_model"].is_null());
    }

    #[test]
    fn a_bar_in_a_cell_is_escaped() {
        assert_eq!(cell("a | b"), "a \\| b");
    }
}
