//! zookeeper-client's transactions: a `MultiWriter` of writes applied all or nothing, a
//! `CheckWriter` whose writes also need a node at a version, and a `MultiReader`, which the
//! simulated ensemble cannot serve yet. Results and errors are the real crate's types.

use std::future::Future;

use zklab_recipes::client::{Op, OpResult};
use zookeeper_client::{
    CheckWriteError, Error, MultiReadResult, MultiWriteError, MultiWriteResult,
};

use super::client::Client;
use super::conversions::{error, stat};
use super::options::{not_yet, CreateOptions};
use super::paths;

/// Writes applied in one transaction: all, or none if one fails.
pub struct MultiWriter<'a> {
    client: &'a Client,
    ops: Vec<Op>,
}

impl<'a> MultiWriter<'a> {
    pub(super) fn new(client: &'a Client) -> Self {
        MultiWriter {
            client,
            ops: Vec::new(),
        }
    }

    /// The transaction applies only while `path` is at `version` (`-1`: any).
    pub fn add_check_version(&mut self, path: &str, version: i32) -> Result<(), Error> {
        let path = path.to_owned();
        self.add(Op::Check { path, version })
    }

    /// Creates a node; the options are checked now, as [`Client::create`] checks them.
    pub fn add_create(
        &mut self,
        path: &str,
        data: &[u8],
        options: &CreateOptions<'_>,
    ) -> Result<(), Error> {
        let mode = options.simulated_mode(false)?;
        let (path, data) = (path.to_owned(), data.to_vec());
        self.add(Op::Create { path, data, mode })
    }

    /// Sets a node's data, if its version is `expected_version` (any, for `None`).
    pub fn add_set_data(
        &mut self,
        path: &str,
        data: &[u8],
        expected_version: Option<i32>,
    ) -> Result<(), Error> {
        let (path, data) = (path.to_owned(), data.to_vec());
        let version = expected_version.unwrap_or(-1);
        self.add(Op::SetData {
            path,
            data,
            version,
        })
    }

    /// Deletes a node, if its version is `expected_version` (any, for `None`).
    pub fn add_delete(&mut self, path: &str, expected_version: Option<i32>) -> Result<(), Error> {
        if path == "/" {
            return Err(Error::BadArguments(&"can not delete root node"));
        }
        let (path, version) = (path.to_owned(), expected_version.unwrap_or(-1));
        self.add(Op::Delete { path, version })
    }

    /// Adds `op` if its path is good, as the real client checks it when it is added.
    fn add(&mut self, op: Op) -> Result<(), Error> {
        paths::check_op(&op)?;
        self.ops.push(op);
        Ok(())
    }

    /// Sends the writes added so far as one transaction (none: nothing is sent) and starts the
    /// writer afresh. A failed transaction names the first op that failed, by its index.
    pub fn commit(
        &mut self,
    ) -> impl Future<Output = Result<Vec<MultiWriteResult>, MultiWriteError>> + Send + 'a {
        let (client, ops) = (self.client, std::mem::take(&mut self.ops));
        async move {
            if ops.is_empty() {
                return Ok(Vec::new());
            }
            let results = match client.send(Op::Multi(ops)).await? {
                OpResult::Multi(results) => results,
                other => return Err(Error::UnexpectedError(format!("{other:?}")).into()),
            };
            let mut written = Vec::with_capacity(results.len());
            for (index, result) in results.into_iter().enumerate() {
                written.push(match result {
                    Ok(OpResult::Checked) => MultiWriteResult::Check,
                    Ok(OpResult::Deleted) => MultiWriteResult::Delete,
                    Ok(OpResult::Created { path, stat: made }) => MultiWriteResult::Create {
                        path,
                        stat: stat(made),
                    },
                    Ok(OpResult::SetData(set)) => MultiWriteResult::SetData { stat: stat(set) },
                    Ok(OpResult::RolledBack) => continue,
                    Ok(other) => {
                        return Err(Error::UnexpectedError(format!("{other:?}")).into());
                    }
                    Err(failed) => {
                        let source = error(failed);
                        return Err(MultiWriteError::OperationFailed { index, source });
                    }
                });
            }
            Ok(written)
        }
    }

    /// Forgets the writes added so far.
    pub fn abort(&mut self) {
        self.ops.clear();
    }
}

/// A [`MultiWriter`] whose first op checks a node's version: its commit fails with
/// `CheckFailed` when the check does, and numbers the other ops from 0.
pub struct CheckWriter<'a> {
    writer: MultiWriter<'a>,
}

impl<'a> CheckWriter<'a> {
    pub(super) fn new(client: &'a Client, path: &str, version: Option<i32>) -> Result<Self, Error> {
        let mut writer = MultiWriter::new(client);
        writer.add_check_version(path, version.unwrap_or(-1))?;
        Ok(CheckWriter { writer })
    }

    /// As [`MultiWriter::add_check_version`].
    pub fn add_check_version(&mut self, path: &str, version: i32) -> Result<(), Error> {
        self.writer.add_check_version(path, version)
    }

    /// As [`MultiWriter::add_create`].
    pub fn add_create(
        &mut self,
        path: &str,
        data: &[u8],
        options: &CreateOptions<'_>,
    ) -> Result<(), Error> {
        self.writer.add_create(path, data, options)
    }

    /// As [`MultiWriter::add_set_data`].
    pub fn add_set_data(
        &mut self,
        path: &str,
        data: &[u8],
        expected_version: Option<i32>,
    ) -> Result<(), Error> {
        self.writer.add_set_data(path, data, expected_version)
    }

    /// As [`MultiWriter::add_delete`].
    pub fn add_delete(&mut self, path: &str, expected_version: Option<i32>) -> Result<(), Error> {
        self.writer.add_delete(path, expected_version)
    }

    /// Sends the check and the writes as one transaction; the results of the writes.
    pub fn commit(
        mut self,
    ) -> impl Future<Output = Result<Vec<MultiWriteResult>, CheckWriteError>> + Send + 'a {
        let commit = self.writer.commit();
        async move {
            let mut results = commit.await?;
            match results.first() {
                Some(MultiWriteResult::Check) => {
                    results.remove(0);
                    Ok(results)
                }
                _ => Err(CheckWriteError::RequestFailed {
                    source: Error::UnexpectedError("expect path check, got none".to_owned()),
                }),
            }
        }
    }
}

/// Reads of several nodes in one request. The simulated ensemble has no multiRead yet: a commit
/// with reads in it fails saying so.
pub struct MultiReader<'a> {
    reads: usize,
    client: std::marker::PhantomData<&'a Client>,
}

impl MultiReader<'_> {
    pub(super) fn new() -> Self {
        MultiReader {
            reads: 0,
            client: std::marker::PhantomData,
        }
    }

    /// Reads a node's data and stat.
    pub fn add_get_data(&mut self, path: &str) -> Result<(), Error> {
        paths::check(path, false)?;
        self.reads += 1;
        Ok(())
    }

    /// Reads a node's children and stat.
    pub fn add_get_children(&mut self, path: &str) -> Result<(), Error> {
        paths::check(path, false)?;
        self.reads += 1;
        Ok(())
    }

    /// With no read added, nothing; else an error: the simulated ensemble has no multiRead yet.
    pub fn commit(&mut self) -> impl Future<Output = Result<Vec<MultiReadResult>, Error>> + Send {
        let reads = std::mem::take(&mut self.reads);
        async move {
            match reads {
                0 => Ok(Vec::new()),
                _ => Err(not_yet("multiRead")),
            }
        }
    }

    /// Forgets the reads added so far.
    pub fn abort(&mut self) {
        self.reads = 0;
    }
}
