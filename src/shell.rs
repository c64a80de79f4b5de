//! `zklab shell`: zkCli's commands, one a line, against the simulated ZooKeeper or a real one,
//! printing exactly what zkCli prints, so that one script gives the same output on both.
//!
//! Like zkCli, the shell prints results on stdout and errors (and, as zkCli does, `Created`) on
//! stderr. It prints none of zkCli's start-up banner (`Connecting to HOST`, `Welcome to
//! ZooKeeper!`, `JLine support is disabled`), its logger's `SLF4J:` lines or the stack trace of
//! a Java exception: `tests/shell/record.sh` drops exactly those lines from zkCli's output. zkCli
//! with no terminal prints no prompt, and neither does the shell; on a terminal it prompts and
//! edits lines ([`Terminal`]). `help` lists the commands it supports.
//!
//! zkCli prints watch notifications the moment they arrive; the shell prints those that have
//! arrived before it runs each command and when it stops.

mod acl_text;
mod client_path;
mod command;
mod options;
mod print;
mod terminal;
mod words;

pub use terminal::Terminal;

use std::collections::HashSet;
use std::io::{self, BufRead, Write};
use std::ops::ControlFlow;

use crate::recipes::acl::{Acl, Acls};
use crate::recipes::client::{Op, OpResult, SessionEvent, Stat, ZkClient, ZkError, ZkEvent, Zxid};

use command::{Command, Notice};

/// Runs zkCli commands read from `input` on `client` until `quit` or the end of the input,
/// writing what zkCli writes to stdout on `out` and what it writes to stderr on `err`.
///
/// The session counts as just connected: the shell first prints the notification zkCli prints
/// when its session connects. `input` is read blocking, as zkCli reads stdin: drive this with
/// `block_on`, not on a runtime's worker thread.
pub async fn run<C: ZkClient>(
    client: &C,
    mut input: impl BufRead,
    out: impl Write,
    err: impl Write,
) -> io::Result<()> {
    let mut shell = Shell {
        client,
        out,
        err,
        created_without_data: HashSet::new(),
        given_up: false,
    };
    shell.print_event(&ZkEvent::Session(SessionEvent::SyncConnected))?;
    let mut previous: Vec<String> = Vec::new();
    loop {
        shell.print_events()?;
        let Some(line) = read_line(&mut input)? else {
            return Ok(());
        };
        // Notifications that arrived while the line was typed come before its output.
        shell.print_events()?;
        if line.is_empty() {
            continue;
        }
        // zkCli keeps the last command when a line has no words (only unpaired quotes).
        let words = words::split(&line);
        if !words.is_empty() {
            previous = words;
        }
        if previous.is_empty() {
            continue;
        }
        // Once the session is given up, zkCli answers every command it knows so, but `quit`.
        if shell.given_up && print::COMMANDS.iter().any(|(name, _)| *name == previous[0]) {
            if previous[0] == "quit" {
                return Ok(());
            }
            writeln!(shell.out, "Not connected")?;
            continue;
        }
        let mut notices = Vec::new();
        let parsed = command::parse(&previous, &mut notices);
        shell.print_notices(&notices)?;
        let outcome = match parsed {
            Ok(command) => shell.execute(command).await,
            Err(failure) => Err(failure),
        };
        match outcome {
            Ok(ControlFlow::Continue(())) => {}
            Ok(ControlFlow::Break(())) => return Ok(()),
            Err(Failure::Message(message)) => writeln!(shell.err, "{message}")?,
            // An uncaught exception ends zkCli: its first line, then nothing more.
            Err(Failure::Exception(exception)) => {
                writeln!(shell.err, "Exception in thread \"main\" {exception}")?;
                return Ok(());
            }
            Err(Failure::Io(error)) => return Err(error),
        }
    }
}

/// Why a command did not complete.
#[derive(Debug)]
enum Failure {
    /// zkCli prints this message on stderr and reads the next line.
    Message(String),
    /// A Java exception zkCli does not catch: it prints its first line and ends.
    Exception(String),
    /// The shell could not write its output.
    Io(io::Error),
}

impl From<io::Error> for Failure {
    fn from(error: io::Error) -> Self {
        Failure::Io(error)
    }
}

struct Shell<'c, C, O, E> {
    client: &'c C,
    out: O,
    err: E,
    /// The czxids of the nodes this shell created without data. zkCli creates those with null
    /// data, which `get` prints as `null` until the data is set; a client here has bytes only,
    /// so the shell remembers them.
    created_without_data: HashSet<Zxid>,
    /// The server refused an authentication and the client gave the session up, as zkCli's
    /// does: later commands are not run.
    given_up: bool,
}

impl<C: ZkClient, O: Write, E: Write> Shell<'_, C, O, E> {
    /// Runs a command; `Break` when the shell stops.
    async fn execute(&mut self, command: Command) -> Result<ControlFlow<()>, Failure> {
        let client = self.client;
        match command {
            Command::Create {
                path,
                data,
                mode,
                acl,
            } => {
                client_path::check(&path, mode.is_sequential()).map_err(Failure::Message)?;
                // zkCli prints an InvalidACL twice: the exception's message, then its own.
                let invalid = |err: &mut E, path: Option<&str>| -> Result<Failure, Failure> {
                    writeln!(err, "{}", print::keeper_message(ZkError::InvalidAcl, path))?;
                    Ok(failed(ZkError::InvalidAcl, path.unwrap_or("null")))
                };
                let acl = match acl {
                    None => Acls::OPEN,
                    Some(entries) if entries.is_empty() => {
                        return Err(invalid(&mut self.err, None)?)
                    }
                    Some(entries) => Acls::new(entries),
                };
                let bytes = data.as_deref().unwrap_or_default().as_bytes().to_vec();
                let op = Op::Create {
                    path: path.clone(),
                    data: bytes,
                    mode,
                    acl,
                };
                let (created, stat) = match client.call(op).await {
                    Ok(OpResult::Created { path, stat }) => (path, stat),
                    Ok(_) => return Err(failed(ZkError::MarshallingError, &path)),
                    Err(ZkError::InvalidAcl) => return Err(invalid(&mut self.err, Some(&path))?),
                    Err(error) => return Err(failed(error, &path)),
                };
                if data.is_none() {
                    self.created_without_data.insert(stat.czxid);
                }
                writeln!(self.err, "Created {created}")?;
            }
            Command::Ls {
                path,
                stat,
                watch,
                recursive,
            } => {
                client_path::check(&path, false).map_err(Failure::Message)?;
                if recursive {
                    self.visit_subtree(&path, watch, &Visit::Print).await?;
                } else {
                    let (mut children, parent) = children(client, &path, watch)
                        .await
                        .map_err(|error| failed(error, &path))?;
                    sort(&mut children);
                    writeln!(self.out, "[{}]", children.join(", "))?;
                    if stat {
                        write!(self.out, "{}", print::stat(&parent))?;
                    }
                }
            }
            Command::Get { path, stat, watch } => {
                client_path::check(&path, false).map_err(Failure::Message)?;
                let (data, node) = client
                    .get_data(&path, watch)
                    .await
                    .map_err(|error| failed(error, &path))?;
                let null = data.is_empty()
                    && node.version == 0
                    && self.created_without_data.contains(&node.czxid);
                if null {
                    writeln!(self.out, "null")?;
                } else {
                    writeln!(self.out, "{}", String::from_utf8_lossy(&data))?;
                }
                if stat {
                    write!(self.out, "{}", print::stat(&node))?;
                }
            }
            Command::Stat { path, watch } => {
                client_path::check(&path, false).map_err(Failure::Message)?;
                let stat = client
                    .exists(&path, watch)
                    .await
                    .map_err(|error| failed(error, &path))?
                    .ok_or_else(|| failed(ZkError::NoNode, &path))?;
                write!(self.out, "{}", print::stat(&stat))?;
            }
            Command::Set {
                path,
                data,
                version,
                stat,
            } => {
                client_path::check(&path, false).map_err(Failure::Message)?;
                let node = client
                    .set_data(&path, data.as_bytes(), version)
                    .await
                    .map_err(|error| failed(error, &path))?;
                if stat {
                    write!(self.out, "{}", print::stat(&node))?;
                }
            }
            Command::Delete { path, version } => {
                client_path::check(&path, false).map_err(Failure::Message)?;
                client
                    .delete(&path, version)
                    .await
                    .map_err(|error| failed(error, &path))?;
            }
            Command::Sync { path } => {
                client_path::check(&path, false).map_err(Failure::Message)?;
                match client.sync(&path).await {
                    Ok(()) => writeln!(self.out, "Sync is OK")?,
                    Err(error) => writeln!(self.out, "Sync has failed. rc={}", error.code())?,
                }
            }
            Command::DeleteAll { path, batch } => {
                client_path::check(&path, false).map_err(Failure::Message)?;
                if !self.delete_subtree(&path, batch).await? {
                    writeln!(self.err, "Failed to delete some node(s) in the subtree!")?;
                }
            }
            Command::CountDescendants { path } => {
                client_path::check(&path, false).map_err(Failure::Message)?;
                let count = (client.count_descendants(&path).await)
                    .map_err(|error| failed(error, &path))?;
                writeln!(self.out, "{count}")?;
            }
            Command::Ephemerals { prefix } => {
                let prefix = prefix.unwrap_or_else(|| "/".to_owned());
                client_path::check(&prefix, false).map_err(Failure::Message)?;
                let mut paths =
                    (client.ephemerals(&prefix).await).map_err(|error| failed(error, &prefix))?;
                sort(&mut paths);
                writeln!(self.out, "[{}]", paths.join(", "))?;
            }
            Command::AddWatch { path, mode } => {
                client_path::check(&path, false).map_err(Failure::Message)?;
                (client.add_watch(&path, mode).await).map_err(|error| failed(error, &path))?;
            }
            Command::RemoveWatches { path, kind } => {
                client_path::check(&path, false).map_err(Failure::Message)?;
                (client.remove_watches(&path, kind).await).map_err(|error| failed(error, &path))?;
            }
            Command::GetAcl { path, stat } => {
                client_path::check(&path, false).map_err(Failure::Message)?;
                let (acl, node) =
                    (client.get_acl(&path).await).map_err(|error| failed(error, &path))?;
                write!(self.out, "{}", acl_text::lines(&acl))?;
                if stat {
                    write!(self.out, "{}", print::stat(&node))?;
                }
            }
            Command::SetAcl {
                path,
                acl,
                version,
                stat,
                recursive,
            } => {
                client_path::check(&path, false).map_err(Failure::Message)?;
                if recursive {
                    self.visit_subtree(&path, false, &Visit::SetAcl { acl, version })
                        .await?;
                } else {
                    if acl.is_empty() {
                        return Err(failed(ZkError::InvalidAcl, "null"));
                    }
                    let node = (client.set_acl(&path, Acls::new(acl), version).await)
                        .map_err(|error| failed(error, &path))?;
                    if stat {
                        write!(self.out, "{}", print::stat(&node))?;
                    }
                }
            }
            // zkCli sends it without waiting; only a refusal shows, as the session's end.
            Command::AddAuth { scheme, auth } => {
                let auth = auth.map(String::into_bytes);
                match client.call(Op::AddAuth { scheme, auth }).await {
                    Err(ZkError::AuthFailed) => {
                        self.given_up = true;
                        self.print_events()?;
                        write!(self.out, "{}", print::AUTH_FAILED)?;
                    }
                    // A real server's client (zookeeper-client) cannot send a null auth.
                    Err(ZkError::Unimplemented) => {
                        let message =
                            "zklab shell cannot send an addauth without its auth to this server";
                        return Err(Failure::Message(message.to_owned()));
                    }
                    _ => {}
                }
            }
            // zkCli's whoAmI ignores an error, and lists nobody then.
            Command::WhoAmI => {
                writeln!(self.out, "Auth scheme: User")?;
                for info in client.who_am_i().await.unwrap_or_default() {
                    writeln!(self.out, "{}: {}", info.scheme, info.user)?;
                }
            }
            Command::Help => write!(self.out, "{}", print::HELP)?,
            Command::Quit => {
                // zkCli reports the closed session; an error closing it changes nothing there.
                let _ = client.close().await;
                self.print_events()?;
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// `ls -R` and `setAcl -R` (ZooKeeper's `ZKUtil.visitSubTreeDFS`): the path, then, depth
    /// first, each node's children in order before their own subtrees, each visited as it is
    /// listed. A node deleted on the way is skipped.
    async fn visit_subtree(
        &mut self,
        path: &str,
        watch: bool,
        visit: &Visit,
    ) -> Result<(), Failure> {
        let client = self.client;
        client
            .get_data(path, watch)
            .await
            .map_err(|error| failed(error, path))?;
        self.visit(path, visit).await?;
        let mut unvisited = vec![path.to_owned()];
        while let Some(parent) = unvisited.pop() {
            let mut children = match children(client, &parent, watch).await {
                Ok((children, _)) => children,
                Err(ZkError::NoNode) => continue,
                Err(error) => return Err(failed(error, &parent)),
            };
            sort(&mut children);
            let prefix = if parent == "/" { "" } else { parent.as_str() };
            let paths: Vec<String> = children
                .iter()
                .map(|child| format!("{prefix}/{child}"))
                .collect();
            for child in &paths {
                self.visit(child, visit).await?;
            }
            unvisited.extend(paths.into_iter().rev());
        }
        Ok(())
    }

    /// One node of [`Shell::visit_subtree`]: its path printed, or its ACL set, a failure
    /// printed and passed over as zkCli does (its message, with no line break).
    async fn visit(&mut self, path: &str, visit: &Visit) -> Result<(), Failure> {
        match visit {
            Visit::Print => writeln!(self.out, "{path}")?,
            Visit::SetAcl { acl, .. } if acl.is_empty() => {
                write!(
                    self.out,
                    "{}",
                    print::keeper_message(ZkError::InvalidAcl, None)
                )?;
            }
            Visit::SetAcl { acl, version } => {
                let acl = Acls::new(acl.clone());
                if let Err(error) = self.client.set_acl(path, acl, *version).await {
                    write!(self.out, "{}", print::keeper_message(error, Some(path)))?;
                }
            }
        }
        Ok(())
    }

    /// `deleteall` (ZooKeeper's `ZKUtil.deleteRecursive`): the subtree listed breadth first,
    /// then deleted from its end, `batch` deletes to a multi (0 or less: one multi). Whether
    /// every multi held.
    async fn delete_subtree(&mut self, path: &str, batch: i32) -> Result<bool, Failure> {
        let client = self.client;
        let mut tree = vec![path.to_owned()];
        let mut next = 0;
        while let Some(parent) = tree.get(next).cloned() {
            next += 1;
            let mut names = match children(client, &parent, false).await {
                Ok((names, _)) => names,
                Err(error) => return Err(failed(error, &parent)),
            };
            sort(&mut names);
            tree.extend(names.iter().map(|name| format!("{parent}/{name}")));
        }
        let deletes: Vec<Op> = (tree.into_iter().rev())
            .map(|path| Op::Delete { path, version: -1 })
            .collect();
        let size = usize::try_from(batch).ok().filter(|&size| size > 0);
        let mut whole = true;
        for ops in deletes.chunks(size.unwrap_or(deletes.len().max(1))) {
            let held = client.multi(ops.to_vec()).await;
            whole &= held.is_ok_and(|results| results.iter().all(Result::is_ok));
        }
        Ok(whole)
    }

    fn print_notices(&mut self, notices: &[Notice]) -> io::Result<()> {
        for notice in notices {
            match notice {
                Notice::LsHelp => write!(self.out, "{}", print::LS_HELP)?,
                Notice::Deprecated(warning) => writeln!(self.err, "{warning}")?,
                Notice::AclText(warning) => writeln!(self.err, "{warning}")?,
            }
        }
        Ok(())
    }

    /// Prints the notifications that have arrived (a given-up session's end is zkCli's
    /// AuthFailed, printed already).
    fn print_events(&mut self) -> io::Result<()> {
        while let Some(event) = self.client.try_next_event() {
            if self.given_up && event == ZkEvent::Session(SessionEvent::Closed) {
                continue;
            }
            self.print_event(&event)?;
        }
        Ok(())
    }

    fn print_event(&mut self, event: &ZkEvent) -> io::Result<()> {
        write!(self.out, "{}", print::event(event))
    }
}

/// What [`Shell::visit_subtree`] does with each node.
enum Visit {
    /// Print its path.
    Print,
    /// Set its ACL, if its ACL version matches.
    SetAcl { acl: Vec<Acl>, version: i32 },
}

/// A node's children (unsorted) and stat: `ZkClient::get_children` leaves the stat out.
async fn children<C: ZkClient>(
    client: &C,
    path: &str,
    watch: bool,
) -> Result<(Vec<String>, Stat), ZkError> {
    let op = Op::GetChildren {
        path: path.to_owned(),
        watch,
    };
    match client.call(op).await? {
        OpResult::Children { children, stat } => Ok((children, stat)),
        // A reply of another shape is the client's fault, as `ZkClient`'s own methods say.
        _ => Err(ZkError::MarshallingError),
    }
}

fn failed(error: ZkError, path: &str) -> Failure {
    Failure::Message(print::error(error, path))
}

/// zkCli sorts children as Java compares strings: by UTF-16 code unit.
fn sort(children: &mut [String]) {
    children.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
}

/// One line of input without its line break, as Java's `readLine` gives it (bytes that are not
/// UTF-8 become U+FFFD); `None` at the end of the input.
fn read_line(input: &mut impl BufRead) -> io::Result<Option<String>> {
    let mut bytes = Vec::new();
    if input.read_until(b'\n', &mut bytes)? == 0 {
        return Ok(None);
    }
    if bytes.ends_with(b"\n") {
        bytes.pop();
        if bytes.ends_with(b"\r") {
            bytes.pop();
        }
    }
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}
