//! zkCli's commands as the shell reads them: each one's options and argument rules, in the order
//! zkCli checks them, and the notices zkCli prints while it parses.

use crate::recipes::acl::Acl;
use crate::recipes::client::{AddWatchMode, CreateMode, WatcherKind};

use super::options::{self, Parsed, Spec};
use super::{acl_text, print, Failure};

/// A command line that parsed, ready to run.
pub(super) enum Command {
    /// `create [-s] [-e] [-c] [-t ttl] path [data]`.
    Create {
        /// The path, or the prefix of a sequential node's name.
        path: String,
        /// `None` when left out: zkCli then creates the node with null data.
        data: Option<String>,
        /// From `-s`, `-e`, `-c` and `-t`.
        mode: CreateMode,
        /// The entries its ACL argument gave (maybe none), or `None`: open to anyone.
        acl: Option<Vec<Acl>>,
    },
    /// `ls [-s] [-w] [-R] path`.
    Ls {
        /// The parent.
        path: String,
        /// `-s`: print the parent's stat after its children.
        stat: bool,
        /// `-w`: leave a child watch.
        watch: bool,
        /// `-R`: list the whole subtree.
        recursive: bool,
    },
    /// `get [-s] [-w] path`.
    Get {
        /// The node.
        path: String,
        /// `-s`: print the stat after the data.
        stat: bool,
        /// `-w`: leave a data watch.
        watch: bool,
    },
    /// `stat [-w] path`.
    Stat {
        /// The node.
        path: String,
        /// `-w`: leave a watch, whether or not the node exists.
        watch: bool,
    },
    /// `set [-s] [-v version] path data`.
    Set {
        /// The node.
        path: String,
        /// The new data.
        data: String,
        /// The expected version, -1 for any.
        version: i32,
        /// `-s`: print the new stat.
        stat: bool,
    },
    /// `delete [-v version] path`.
    Delete {
        /// The node.
        path: String,
        /// The expected version, -1 for any.
        version: i32,
    },
    /// `sync path`.
    Sync {
        /// The path the sync is for.
        path: String,
    },
    /// `deleteall path [-b batch size]`: the subtree, deepest first, in multis of the batch size.
    DeleteAll {
        /// The top of the subtree.
        path: String,
        /// Deletes per multi; 0 or less: all in one.
        batch: i32,
    },
    /// `getAllChildrenNumber path`: how many nodes are under it.
    CountDescendants {
        /// The node.
        path: String,
    },
    /// `getEphemerals [path]`: the session's ephemeral nodes whose paths start with it.
    Ephemerals {
        /// The prefix; all of them when left out.
        prefix: Option<String>,
    },
    /// `addWatch [-m mode] path`: a persistent watch, recursive unless the mode says not.
    AddWatch {
        /// The node.
        path: String,
        /// `-m PERSISTENT` or `-m PERSISTENT_RECURSIVE` (any case).
        mode: AddWatchMode,
    },
    /// `removewatches path [-c|-d|-a] [-l]`: the session's watches of a kind on the path.
    RemoveWatches {
        /// The node.
        path: String,
        /// `-c` child watches, `-d` data watches, else every kind.
        kind: WatcherKind,
    },
    /// `getAcl [-s] path`.
    GetAcl {
        /// The node.
        path: String,
        /// `-s`: print the stat after the ACL.
        stat: bool,
    },
    /// `setAcl [-s] [-v version] [-R] path acl`.
    SetAcl {
        /// The node, or the top of the subtree.
        path: String,
        /// The entries the ACL argument gave (maybe none).
        acl: Vec<Acl>,
        /// The expected ACL version, -1 for any.
        version: i32,
        /// `-s`: print the new stat (not with `-R`).
        stat: bool,
        /// `-R`: every node of the subtree, each failure printed and passed over.
        recursive: bool,
    },
    /// `addauth scheme [auth]`.
    AddAuth {
        /// The scheme.
        scheme: String,
        /// What it reads; left out, zkCli sends a null.
        auth: Option<String>,
    },
    /// `whoami`.
    WhoAmI,
    /// `quit`: close the session and stop.
    Quit,
    /// `help`: the commands this shell supports, on stdout.
    Help,
}

/// What zkCli prints while it parses, before the command runs or fails.
pub(super) enum Notice {
    /// `ls -?`: the help for `ls`, on stdout.
    LsHelp,
    /// A command in its old form (`get path watch`, `delete path version`): a warning on stderr.
    Deprecated(&'static str),
    /// What its ACL parser could not read: a warning on stderr.
    AclText(String),
}

const CREATE: Spec = &[('e', false), ('s', false), ('c', false), ('t', true)];
const LS: Spec = &[('?', false), ('s', false), ('w', false), ('R', false)];
const GET: Spec = &[('s', false), ('w', false)];
const STAT: Spec = &[('w', false)];
const SET: Spec = &[('s', false), ('v', true)];
const DELETE: Spec = &[('v', true)];
const DELETE_ALL: Spec = &[('b', true)];
const ADD_WATCH: Spec = &[('m', true)];
const REMOVE_WATCHES: Spec = &[('c', false), ('d', false), ('a', false), ('l', false)];
const GET_ACL: Spec = &[('s', false)];
const SET_ACL: Spec = &[('s', false), ('v', true), ('R', false)];

/// Parses a line's words (at least one) as zkCli would; `notices` gets what zkCli prints on the
/// way, even when parsing then fails.
pub(super) fn parse(words: &[String], notices: &mut Vec<Notice>) -> Result<Command, Failure> {
    let name = words.first().map_or("", String::as_str);
    match name {
        "create" => create(words, notices),
        "ls" => {
            let parsed = options::parse(LS, words)?;
            if parsed.has('?') {
                notices.push(Notice::LsHelp);
            }
            let deprecated =
                "'ls path [watch]' has been deprecated. Please use 'ls [-w] path' instead.";
            let parsed = old_watch(LS, words, parsed, deprecated, notices)?;
            Ok(Command::Ls {
                path: path_of(&parsed)?,
                stat: parsed.has('s'),
                watch: parsed.has('w'),
                recursive: parsed.has('R'),
            })
        }
        "get" => {
            let deprecated =
                "'get path [watch]' has been deprecated. Please use 'get [-s] [-w] path' instead.";
            let parsed = parse_watchable(GET, words, deprecated, notices)?;
            Ok(Command::Get {
                path: path_of(&parsed)?,
                stat: parsed.has('s'),
                watch: parsed.has('w'),
            })
        }
        "stat" => {
            let deprecated =
                "'stat path [watch]' has been deprecated. Please use 'stat [-w] path' instead.";
            let parsed = parse_watchable(STAT, words, deprecated, notices)?;
            Ok(Command::Stat {
                path: path_of(&parsed)?,
                watch: parsed.has('w'),
            })
        }
        "set" => {
            let parsed = options::parse(SET, words)?;
            let [_, path, data, ..] = parsed.args.as_slice() else {
                return Err(usage(&parsed));
            };
            Ok(Command::Set {
                path: path.clone(),
                data: data.clone(),
                version: version(&parsed)?,
                stat: parsed.has('s'),
            })
        }
        "delete" => {
            let parsed = options::parse(DELETE, words)?;
            let path = path_of(&parsed)?;
            // zkCli parses the old form `delete path version` again, to the same options: the
            // version given that way is ignored.
            if parsed.args.len() > 2 {
                notices.push(Notice::Deprecated(
                    "'delete path [version]' has been deprecated. Please use 'delete [-v version] path' instead.",
                ));
            }
            let version = version(&parsed)?;
            Ok(Command::Delete { path, version })
        }
        "sync" => Ok(Command::Sync {
            path: path_of(&options::parse(&[], words)?)?,
        }),
        "deleteall" => {
            let parsed = options::parse(DELETE_ALL, words)?;
            let path = path_of(&parsed)?;
            let batch = match parsed.value('b').map(str::parse::<i32>) {
                None => 1000,
                Some(Ok(batch)) => batch,
                Some(Err(_)) => {
                    return Err(Failure::Message(
                        "-b argument must be an int value".to_owned(),
                    ))
                }
            };
            Ok(Command::DeleteAll { path, batch })
        }
        "getAllChildrenNumber" => Ok(Command::CountDescendants {
            path: path_of(&options::parse(&[], words)?)?,
        }),
        "getEphemerals" => Ok(Command::Ephemerals {
            prefix: options::parse(&[], words)?.args.get(1).cloned(),
        }),
        "addWatch" => {
            let parsed = options::parse(ADD_WATCH, words)?;
            let [_, path] = parsed.args.as_slice() else {
                return Err(usage(&parsed));
            };
            // Java's `AddWatchMode.valueOf` of the value in upper case.
            let mode = match parsed.value('m').map(str::to_uppercase).as_deref() {
                None | Some("PERSISTENT_RECURSIVE") => AddWatchMode::PersistentRecursive,
                Some("PERSISTENT") => AddWatchMode::Persistent,
                Some(_) => return Err(usage(&parsed)),
            };
            Ok(Command::AddWatch {
                path: path.clone(),
                mode,
            })
        }
        // `-l` removes the watches locally when the server cannot be reached: the shell's
        // session always reaches it, so the flag changes nothing.
        "removewatches" => {
            let parsed = options::parse(REMOVE_WATCHES, words)?;
            let path = path_of(&parsed)?;
            let kind = if parsed.has('c') {
                WatcherKind::Children
            } else if parsed.has('d') {
                WatcherKind::Data
            } else {
                WatcherKind::Any
            };
            Ok(Command::RemoveWatches { path, kind })
        }
        "getAcl" => {
            let parsed = options::parse(GET_ACL, words)?;
            Ok(Command::GetAcl {
                path: path_of(&parsed)?,
                stat: parsed.has('s'),
            })
        }
        // zkCli reads the ACL before the version, whose bad number ends it.
        "setAcl" => {
            let parsed = options::parse(SET_ACL, words)?;
            let [_, path, acl, ..] = parsed.args.as_slice() else {
                return Err(usage(&parsed));
            };
            let acl = acl_parsed(acl, notices);
            Ok(Command::SetAcl {
                path: path.clone(),
                acl,
                version: version(&parsed)?,
                stat: parsed.has('s'),
                recursive: parsed.has('R'),
            })
        }
        "addauth" => {
            let parsed = options::parse(&[], words)?;
            let [_, scheme, auth @ ..] = parsed.args.as_slice() else {
                return Err(usage(&parsed));
            };
            Ok(Command::AddAuth {
                scheme: scheme.clone(),
                auth: auth.first().cloned(),
            })
        }
        "whoami" => Ok(Command::WhoAmI),
        "quit" => Ok(Command::Quit),
        "help" => Ok(Command::Help),
        _ if print::COMMANDS.iter().any(|(known, _)| *known == name) => Err(Failure::Message(
            format!("zklab shell does not support the command {name}"),
        )),
        _ => Err(Failure::Message(print::command_not_found(name))),
    }
}

/// An ACL argument read by zkCli's parser, what it could not read among the notices.
fn acl_parsed(text: &str, notices: &mut Vec<Notice>) -> Vec<Acl> {
    let mut warnings = Vec::new();
    let acl = acl_text::parse(text, &mut warnings);
    notices.extend(warnings.into_iter().map(Notice::AclText));
    acl
}

fn create(words: &[String], notices: &mut Vec<Notice>) -> Result<Command, Failure> {
    let parsed = options::parse(CREATE, words)?;
    let [_, path, rest @ ..] = parsed.args.as_slice() else {
        return Err(usage(&parsed));
    };
    let (ephemeral, sequential) = (parsed.has('e'), parsed.has('s'));
    let (container, ttl) = (parsed.has('c'), parsed.value('t'));
    // zkCli's own checks, in its order and words.
    let malformed = |message: &str| Err(Failure::Message(message.to_owned()));
    if container && (ephemeral || sequential) {
        return malformed(
            "-c cannot be combined with -s or -e. Containers cannot be ephemeral or sequential.",
        );
    }
    let ttl_ms = match ttl.map(str::parse::<i64>) {
        None => None,
        Some(Ok(ttl_ms)) => Some(ttl_ms),
        Some(Err(_)) => return malformed("-t argument must be a long value"),
    };
    if ttl_ms.is_some() && ephemeral {
        return malformed("TTLs cannot be used with Ephemeral znodes");
    }
    if ttl_ms.is_some() && container {
        return malformed("TTLs cannot be used with Container znodes");
    }
    if ttl_ms.is_some_and(|ttl_ms| !(1..=CreateMode::MAX_TTL_MS).contains(&ttl_ms)) {
        let most = CreateMode::MAX_TTL_MS;
        return malformed(&format!(
            "ttl must be positive and cannot be larger than: {most}"
        ));
    }
    let mode = match (ephemeral, sequential, container, ttl_ms) {
        (true, true, ..) => CreateMode::EphemeralSequential,
        (true, false, ..) => CreateMode::Ephemeral,
        (false, true, _, Some(ttl_ms)) => CreateMode::PersistentSequentialWithTtl { ttl_ms },
        (false, true, _, None) => CreateMode::PersistentSequential,
        (false, false, true, _) => CreateMode::Container,
        (false, false, false, Some(ttl_ms)) => CreateMode::PersistentWithTtl { ttl_ms },
        (false, false, false, None) => CreateMode::Persistent,
    };
    Ok(Command::Create {
        path: path.clone(),
        data: rest.first().cloned(),
        mode,
        acl: rest.get(1).map(|text| acl_parsed(text, notices)),
    })
}

/// `words` parsed as a command that still reads the old watch flag (see [`old_watch`]).
fn parse_watchable(
    spec: Spec,
    words: &[String],
    deprecated: &'static str,
    notices: &mut Vec<Notice>,
) -> Result<Parsed, Failure> {
    let parsed = options::parse(spec, words)?;
    old_watch(spec, words, parsed, deprecated, notices)
}

/// `ls`, `get` and `stat` still read a third argument as the old watch flag: zkCli overwrites
/// the third word with `-w`, warns and parses again.
fn old_watch(
    spec: Spec,
    words: &[String],
    parsed: Parsed,
    deprecated: &'static str,
    notices: &mut Vec<Notice>,
) -> Result<Parsed, Failure> {
    if parsed.args.len() <= 2 {
        return Ok(parsed);
    }
    notices.push(Notice::Deprecated(deprecated));
    let mut words = words.to_vec();
    words[2] = "-w".into();
    options::parse(spec, &words)
}

/// The path argument, or the command's usage line when there is none.
fn path_of(parsed: &Parsed) -> Result<String, Failure> {
    parsed.args.get(1).cloned().ok_or_else(|| usage(parsed))
}

fn usage(parsed: &Parsed) -> Failure {
    let name = parsed.args.first().map_or("", String::as_str);
    Failure::Message(print::usage(name))
}

/// The `-v` option, read as Java's `Integer.parseInt` reads it; zkCli does not catch its
/// exception, which ends zkCli.
fn version(parsed: &Parsed) -> Result<i32, Failure> {
    match parsed.value('v') {
        None => Ok(-1),
        Some(value) => value.parse().map_err(|_| {
            Failure::Exception(format!(
                "java.lang.NumberFormatException: For input string: \"{value}\""
            ))
        }),
    }
}
