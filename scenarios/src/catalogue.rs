//! The catalogue: every scenario `list`, `run`, `replay`, `check` and `real` know, by name, from
//! one line per recipe (the `kits!` list in `lib.rs`). Known bugs stay in it for good, so the
//! harness keeps proving it catches them.

use zklab_sim::property::Property;

use crate::scenario::Scenario;

/// Every scenario, in listing order.
pub fn scenarios() -> impl Iterator<Item = &'static Scenario> {
    crate::KITS.iter().flat_map(|scenarios| scenarios.iter())
}

/// The property whose violation is called `violation` (`mutual-exclusion`), among those that
/// judge the catalogue's scenarios: a schedule names it so.
pub fn property(violation: &str) -> Option<&'static Property> {
    scenarios()
        .flat_map(|scenario| scenario.kit.properties())
        .find(|property| property.violation == violation)
}

/// The scenario of that name, or an error that lists the known ones.
pub fn find(name: &str) -> Result<&'static Scenario, String> {
    scenarios()
        .find(|scenario| scenario.name == name)
        .ok_or_else(|| {
            let known: Vec<&str> = scenarios().map(|s| s.name).collect();
            format!(
                "unknown scenario `{name}`; known scenarios: {}",
                known.join(", ")
            )
        })
}

/// The scenario of that name, if its workload can run with `clients` clients; else why not.
pub fn find_fitting(name: &str, clients: usize) -> Result<&'static Scenario, String> {
    let scenario = find(name)?;
    scenario.fits(clients)?;
    Ok(scenario)
}
