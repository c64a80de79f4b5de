//! The handle an application keeps for a recipe: where the recipe's nodes live, the recipe's own
//! settings and who writes down what it tells the application. Every recipe's public type is a
//! [`Handle`] over its settings (a [`crate::barrier::Barrier`] is a `Handle<BarrierSettings>`),
//! so the path, the recorder and the driver each operation runs are kept in one place, and each
//! recipe file holds only what its operations do.

use std::fmt::{self, Debug};
use std::sync::Arc;

use crate::client::ZkClient;
use crate::machine::{Driver, Input, Recipe};
use crate::outcome::Recorder;
use crate::parts::link::{run_until, RecipeError};

/// A machine that plays a recipe whose application asks `Request`s and hears `Outcome`s: the
/// recipe's own, or one built around it (a known bug's mutation), as each `*_with` operation of
/// a recipe's handle, and the handle it gives back, takes one.
pub trait Plays<Request, Outcome>: Recipe<Request = Request, Outcome = Outcome> {}

impl<M: Recipe> Plays<M::Request, M::Outcome> for M {}

/// A recipe at one path, as an application keeps it: cheap to clone, and each operation runs the
/// recipe's machine over the client it is given.
#[derive(Clone)]
pub struct Handle<S> {
    /// The recipe's node or directory, as the recipe says.
    pub(crate) path: String,
    /// What the recipe keeps besides its path (a threshold, its sites, a count of its puts).
    pub(crate) settings: S,
    /// Where what the recipe tells its application is written down, if anywhere.
    pub(crate) recorder: Option<Arc<dyn Recorder>>,
}

impl<S: Debug> Debug for Handle<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("path", &self.path)
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl<S> Handle<S> {
    /// The recipe whose nodes live at `path`, with its `settings`, writing nothing down.
    pub fn at(path: &str, settings: S) -> Self {
        Handle {
            path: path.to_owned(),
            settings,
            recorder: None,
        }
    }

    /// The recipe's node or directory.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The same recipe, writing down everything it tells the application with `recorder`.
    pub fn recording(mut self, recorder: Option<Arc<dyn Recorder>>) -> Self {
        self.recorder = recorder;
        self
    }

    /// Another recipe at `path`, writing down with the same recorder: a recipe built on another
    /// (a name service's names are configurations) tells its application through it.
    pub(crate) fn recipe_at<T>(&self, path: &str, settings: T) -> Handle<T> {
        Handle::at(path, settings).recording(self.recorder.clone())
    }

    /// A driver running `machine` over `client`, writing down what it tells.
    pub(crate) fn driver<'c, C: ZkClient, M: Recipe>(
        &self,
        client: &'c C,
        machine: M,
    ) -> Driver<'c, C, M> {
        Driver::new(client, machine).recording(self.recorder.clone())
    }

    /// Starts `machine` over `client` and runs it until `wanted` picks what the caller waits for
    /// out of an outcome: the driver, to go on with, and what was picked. A lost session or a
    /// failure ends the wait early.
    pub(crate) async fn start_until<'c, C: ZkClient, M: Recipe, T>(
        &self,
        client: &'c C,
        machine: M,
        wanted: impl Fn(&M::Outcome) -> Option<T>,
    ) -> Result<(Driver<'c, C, M>, T), RecipeError> {
        let mut driver = self.driver(client, machine);
        let picked = run_until(&mut driver, Input::Start, wanted).await?;
        Ok((driver, picked))
    }
}
