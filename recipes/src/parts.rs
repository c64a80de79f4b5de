//! The shared parts recipes are built from, so that each recipe is small and written once:
//! [`contender`] gets in line under a directory, [`link`] deals with the session's connection.

pub mod contender;
pub mod link;
