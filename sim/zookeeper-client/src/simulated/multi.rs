//! zookeeper-client's transactions: a `MultiWriter` of writes applied all or nothing, a
//! `CheckWriter` whose writes also need a node at a version, and a `MultiReader` of reads in
//! one request. Results and errors are the real crate's types.

use std::future::Future;

use zklab_recipes::client::{Op, OpResult};
use zookeeper_client::{
    CheckWriteError, Error, MultiReadResult, MultiWriteError, MultiWriteResult,
};

use super::client::Client;
use super::conversions::{error, stat};
use super::options::CreateOptions;
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
        self.add(options.create_op(path, data, false)?)
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

/// Reads of several nodes in one request (multiRead), all from one state of the server, each
/// answered on its own.
pub struct MultiReader<'a> {
    client: &'a Client,
    reads: Vec<Op>,
}

impl<'a> MultiReader<'a> {
    pub(super) fn new(client: &'a Client) -> Self {
        MultiReader {
            client,
            reads: Vec::new(),
        }
    }

    /// Reads a node's data and stat.
    pub fn add_get_data(&mut self, path: &str) -> Result<(), Error> {
        paths::check(path, false)?;
        let (path, watch) = (path.to_owned(), false);
        self.reads.push(Op::GetData { path, watch });
        Ok(())
    }

    /// Reads a node's children (their names alone).
    pub fn add_get_children(&mut self, path: &str) -> Result<(), Error> {
        paths::check(path, false)?;
        let (path, watch) = (path.to_owned(), false);
        self.reads.push(Op::GetChildren { path, watch });
        Ok(())
    }

    /// Sends the reads added so far (none: nothing is sent) and starts the reader afresh. A
    /// read that fails alone (`NoNode`, say) is its own `MultiReadResult::Error`.
    pub fn commit(
        &mut self,
    ) -> impl Future<Output = Result<Vec<MultiReadResult>, Error>> + Send + 'a {
        let (client, reads) = (self.client, std::mem::take(&mut self.reads));
        async move {
            if reads.is_empty() {
                return Ok(Vec::new());
            }
            let results = match client.send(Op::MultiRead(reads)).await? {
                OpResult::MultiRead(results) => results,
                other => return Err(Error::UnexpectedError(format!("{other:?}"))),
            };
            let read = |result| match result {
                Ok(OpResult::Data { data, stat: read }) => Ok(MultiReadResult::Data {
                    data,
                    stat: stat(read),
                }),
                Ok(OpResult::Listed(children)) => Ok(MultiReadResult::Children { children }),
                Ok(other) => Err(Error::UnexpectedError(format!("{other:?}"))),
                Err(failed) => Ok(MultiReadResult::Error { err: error(failed) }),
            };
            results.into_iter().map(read).collect()
        }
    }

    /// Forgets the reads added so far.
    pub fn abort(&mut self) {
        self.reads.clear();
    }
}
