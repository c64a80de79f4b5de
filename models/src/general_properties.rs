//! The properties every recipe has beyond what its monitors judge: no znode left behind, and
//! (the model's own) no stuck state.

use zklab_sim::property::Property;

/// No stuck state: broken by a state from which only a fault leads on, though some client has
/// not finished. The model's untimed counterpart of a run's deadlock, liveness and stuck
/// waiter; a run in the simulator has no violation of that name.
pub const NO_STUCK_STATE: &str = "no stuck state";

/// No orphans: broken when recipe znodes were left behind after every client finished. The
/// model checks it once every client is done; a simulated or a real run, once its clients are.
pub static ORPHAN: Property = Property::new("orphan", "no orphans");
