//! A quorum of ZooKeeper servers whose members a test can kill and restart.

use std::cell::Cell;
use std::fmt::Write;

use super::error::LaunchError;
use super::installation::Installation;
use super::ports::{free_ports, on_fresh_ports};
use super::probe::Mode;
use super::server_process::{wait_until, ServerProcess};

/// Running `QuorumPeerMain`s on free ports of 127.0.0.1, all killed when dropped. Members are
/// numbered from 0; member `i` has `myid` `i + 1`.
#[derive(Debug)]
pub struct Ensemble {
    members: Vec<ServerProcess>,
}

impl Ensemble {
    /// Starts `size` members and returns once they have elected a leader and every other member
    /// follows it. A size of 1 runs the quorum code too (`standaloneEnabled=false`), so its one
    /// member reports `leader`, not `standalone`.
    pub fn start(installation: &Installation, size: usize) -> Result<Self, LaunchError> {
        if size == 0 {
            return Err(LaunchError::EmptyEnsemble);
        }
        on_fresh_ports(|| Self::start_once(installation, size))
    }

    fn start_once(installation: &Installation, size: usize) -> Result<Self, LaunchError> {
        let ports = free_ports(3 * size).map_err(|e| LaunchError::io("finding free ports", e))?;
        let (client_ports, quorum_ports) = ports.split_at(size);
        let mut quorum = String::from("initLimit=10\nsyncLimit=5\nstandaloneEnabled=false\n");
        for (i, pair) in quorum_ports.chunks(2).enumerate() {
            let (peer, election) = (pair[0], pair[1]);
            let _ = writeln!(quorum, "server.{}=127.0.0.1:{peer}:{election}", i + 1);
        }
        let members = client_ports
            .iter()
            .enumerate()
            .map(|(i, &port)| {
                ServerProcess::prepare(
                    installation,
                    format!("member {i}"),
                    "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                    port,
                    &quorum,
                    Some(i + 1),
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut ensemble = Ensemble { members };
        for member in &mut ensemble.members {
            member.spawn()?;
        }
        ensemble.wait_for_leader()?;
        Ok(ensemble)
    }

    /// How many members the ensemble has, running or not.
    pub fn size(&self) -> usize {
        self.members.len()
    }

    /// `127.0.0.1:<port>,...` over every member, for a client.
    pub fn connect_string(&self) -> String {
        let addresses: Vec<String> = self
            .members
            .iter()
            .map(|member| format!("127.0.0.1:{}", member.client_port()))
            .collect();
        addresses.join(",")
    }

    /// The client port of `member` on 127.0.0.1.
    pub fn client_port(&self, member: usize) -> Result<u16, LaunchError> {
        Ok(self.member(member)?.client_port())
    }

    /// The process id of `member`, unless it is killed.
    pub fn pid(&self, member: usize) -> Result<Option<u32>, LaunchError> {
        Ok(self.member(member)?.pid())
    }

    /// What `srvr` says of `member` now; `None` when it is killed or not serving (during an
    /// election, for instance).
    pub fn mode(&self, member: usize) -> Result<Option<Mode>, LaunchError> {
        Ok(self.member(member)?.mode())
    }

    /// The member that says it leads now, if one does.
    pub fn leader(&self) -> Option<usize> {
        (0..self.size()).find(|&i| self.members[i].mode() == Some(Mode::Leader))
    }

    /// Waits until the running members have settled: each serves, exactly one as leader and the
    /// others as followers. Returns the leader. Times out when too few members run for a quorum.
    /// It trusts what members say now: a leader that has just lost its quorum still says
    /// `leader` until it notices, which took about two seconds here.
    pub fn wait_for_leader(&mut self) -> Result<usize, LaunchError> {
        let leader = Cell::new(None);
        wait_until(&mut self.members, "settled ensemble", |members| {
            let modes: Vec<(usize, Option<Mode>)> = (0..members.len())
                .filter(|&i| members[i].is_started())
                .map(|i| (i, members[i].mode()))
                .collect();
            let leaders: Vec<usize> = modes
                .iter()
                .filter(|(_, mode)| *mode == Some(Mode::Leader))
                .map(|&(i, _)| i)
                .collect();
            let all_follow = modes
                .iter()
                .all(|(_, mode)| matches!(mode, Some(Mode::Leader | Mode::Follower)));
            leader.set(leaders.first().copied());
            all_follow && leaders.len() == 1
        })?;
        Ok(leader.get().expect("a settled ensemble has a leader"))
    }

    /// Kills `member` with SIGKILL, as a crash would, and waits until its process is gone. A
    /// killed member stays killed.
    pub fn kill(&mut self, member: usize) -> Result<(), LaunchError> {
        self.member_mut(member)?.kill()
    }

    /// Starts `member` again (killing it first if it runs) with the same config and data, and
    /// waits until the ensemble has settled with it serving. Returns the leader.
    pub fn restart(&mut self, member: usize) -> Result<usize, LaunchError> {
        self.member_mut(member)?.spawn()?;
        self.wait_for_leader()
    }

    /// Kills every member and waits for each to exit.
    pub fn stop(&mut self) -> Result<(), LaunchError> {
        self.members.iter_mut().try_for_each(ServerProcess::kill)
    }

    fn member(&self, member: usize) -> Result<&ServerProcess, LaunchError> {
        let size = self.size();
        self.members
            .get(member)
            .ok_or(LaunchError::NoSuchMember { member, size })
    }

    fn member_mut(&mut self, member: usize) -> Result<&mut ServerProcess, LaunchError> {
        let size = self.size();
        self.members
            .get_mut(member)
            .ok_or(LaunchError::NoSuchMember { member, size })
    }
}
