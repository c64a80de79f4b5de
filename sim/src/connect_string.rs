//! The simulated ensemble's connect string: a host per server, as a real ensemble's lists its
//! servers (`zklab-server-0:2181,zklab-server-1:2181,...`). A harness gives it to code that
//! connects by a connect string; the simulated client reads back which servers it names.

/// The host name of a server, its number after it.
const HOST: &str = "zklab-server-";

/// The port every simulated server listens on, ZooKeeper's client port.
const PORT: &str = "2181";

/// The connect string of an ensemble of `servers` servers.
pub fn of(servers: usize) -> String {
    let hosts: Vec<String> = (0..servers).map(|n| format!("{HOST}{n}:{PORT}")).collect();
    hosts.join(",")
}

/// The servers, out of `servers`, that `connect_string` names, in its order; an error says
/// what in it no simulated ensemble of that size has (another host, a chroot).
pub fn servers_named(connect_string: &str, servers: usize) -> Result<Vec<usize>, String> {
    if let Some(at) = connect_string.find('/') {
        return Err(format!(
            "a chroot (`{}`): connect without one",
            &connect_string[at..]
        ));
    }
    let named = |host: &str| {
        let number = host
            .strip_prefix(HOST)?
            .strip_suffix(PORT)?
            .strip_suffix(':')?;
        number.parse::<usize>().ok().filter(|n| *n < servers)
    };
    (connect_string.split(','))
        .map(|host| {
            named(host.trim()).ok_or_else(|| {
                format!(
                    "`{host}`, which is not a server of the simulated ensemble ({})",
                    of(servers)
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connect_string_names_the_servers_it_lists_and_nothing_else() {
        assert_eq!(
            of(3),
            "zklab-server-0:2181,zklab-server-1:2181,zklab-server-2:2181"
        );
        assert_eq!(servers_named(&of(3), 3), Ok(vec![0, 1, 2]));
        assert_eq!(servers_named("zklab-server-1:2181", 3), Ok(vec![1]));
        let beyond = servers_named("zklab-server-3:2181", 3).unwrap_err();
        assert!(
            beyond.starts_with("`zklab-server-3:2181`, which is not"),
            "{beyond}"
        );
        let real = servers_named("127.0.0.1:2181", 1).unwrap_err();
        assert!(real.contains("(zklab-server-0:2181)"), "{real}");
        let chroot = servers_named("zklab-server-0:2181/app", 1).unwrap_err();
        assert!(chroot.starts_with("a chroot (`/app`)"), "{chroot}");
    }
}
