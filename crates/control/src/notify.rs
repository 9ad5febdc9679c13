//! NOTIFY out (RFC 1996 §3.6): after every change, each address of each `notify`
//! remote (and with `notify-ns`, of each name server of the zone but the primary the SOA
//! names) is told, signed with the remote's key when it has one, and retried with a
//! growing pause until it acknowledges — up to [`ATTEMPTS`] times (about half an hour),
//! since a secondary also checks on its own when its refresh timer fires. A newer
//! change replaces the NOTIFYs still being retried for an older one.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tern_wire::tsig::Key;
use tern_wire::{Dname, Name, Rtype};
use tern_zone::{RecordData, ZoneContents};
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};

use crate::peer::{Network, Peer};
use crate::plan::ZonePlan;

/// Tries per target.
pub const ATTEMPTS: u32 = 12;
/// The first pause between tries; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_secs(1);
const MAX_PAUSE: Duration = Duration::from_secs(300);

/// Starts one task per target address: the `notify` remotes', and with `notify-ns` the
/// zone's name servers' ([`ns_targets`]).
pub fn send(
    network: &Arc<dyn Network>,
    plan: &ZonePlan,
    zone: &ZoneContents,
    soa: &RecordData,
    timeout: Duration,
) -> Vec<JoinHandle<()>> {
    let mut tasks = Vec::new();
    let mut told: Vec<SocketAddr> = Vec::new();
    let target = |who: String, key: Option<Key>, source: Option<IpAddr>| Target {
        zone: plan.name.clone(),
        who,
        key,
        source,
        network: Arc::clone(network),
    };
    for remote in &plan.notify {
        for addr in remote.addrs.iter().map(|&a| remote.notify_addr(a)) {
            told.push(addr);
            let target = target(remote.id.clone(), remote.key.clone(), remote.source_for(addr));
            tasks.push(tokio::spawn(target.tell(addr, soa.clone(), timeout)));
        }
    }
    if plan.notify_ns {
        for (ns, glue) in ns_targets(zone) {
            let target = target(ns.to_string(), None, None);
            let (told, soa) = (told.clone(), soa.clone());
            tasks.push(tokio::spawn(async move {
                let addrs = addresses(&target.network, ns, glue).await;
                for addr in addrs.into_iter().filter(|a| !told.contains(a)) {
                    tokio::spawn(target.clone().tell(addr, soa.clone(), timeout));
                }
            }));
        }
    }
    tasks
}

/// Who is told, for the log, the key to sign with, and the network to tell it over.
#[derive(Debug, Clone)]
struct Target {
    zone: Name,
    who: String,
    key: Option<Key>,
    /// The local address to send from (the remote's `via`).
    source: Option<IpAddr>,
    network: Arc<dyn Network>,
}

impl Target {
    /// Sends NOTIFY to `addr` until acknowledged or [`ATTEMPTS`] tries.
    async fn tell(self, addr: SocketAddr, soa: RecordData, timeout: Duration) {
        let Target { zone, who, key, source, network } = self;
        let serial = soa.soa_serial().unwrap_or(0);
        let mut pause = FIRST_PAUSE;
        for attempt in 1..=ATTEMPTS {
            let (zone2, soa2, key2, network) =
                (zone.clone(), soa.clone(), key.clone(), Arc::clone(&network));
            let sent = tokio::task::spawn_blocking(move || {
                let peer = Peer { addr, key: key2.as_ref(), source, tls: None };
                network.notify(peer, &zone2, &soa2, timeout)
            })
            .await;
            match sent {
                Ok(Ok(())) => {
                    info!(zone = %zone, remote = %who, peer = %addr, serial, "NOTIFY acknowledged");
                    return;
                }
                Ok(Err(why)) => {
                    debug!(zone = %zone, peer = %addr, attempt, "NOTIFY not acknowledged: {why}")
                }
                Err(_) => return,
            }
            if attempt == ATTEMPTS {
                warn!(zone = %zone, remote = %who, peer = %addr, serial, "NOTIFY given up after {ATTEMPTS} tries");
                return;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(MAX_PAUSE);
        }
    }
}

/// The servers named by the zone's apex NS RRset except the primary named in its SOA
/// (RFC 1996 §3.6), each with the addresses the zone itself holds for it (glue).
pub fn ns_targets(zone: &ZoneContents) -> Vec<(Name, Vec<IpAddr>)> {
    let Some(apex) = zone.apex() else { return Vec::new() };
    let mname = apex
        .rrset(Rtype::SOA)
        .and_then(|soa| soa.rdatas().next().and_then(|rd| Dname::from_wire_prefix(rd).ok()))
        .map(|(name, _)| name.to_name());
    let Some(ns) = apex.rrset(Rtype::NS) else { return Vec::new() };
    ns.rdatas()
        .filter_map(|rd| Dname::from_wire(rd).ok().map(Dname::to_name))
        .filter(|name| mname.as_ref().is_none_or(|m| !m.eq_ignore_case(name)))
        .map(|name| {
            let glue = glue(zone, &name);
            (name, glue)
        })
        .collect()
}

/// The A and AAAA records the zone holds for `name`.
fn glue(zone: &ZoneContents, name: &Dname) -> Vec<IpAddr> {
    let Some(node) = zone.find(name).and_then(|id| zone.node(id)) else { return Vec::new() };
    let mut out = Vec::new();
    if let Some(a) = node.rrset(Rtype::A) {
        out.extend(a.rdatas().filter_map(|rd| <[u8; 4]>::try_from(rd).ok()).map(IpAddr::from));
    }
    if let Some(aaaa) = node.rrset(Rtype::AAAA) {
        out.extend(aaaa.rdatas().filter_map(|rd| <[u8; 16]>::try_from(rd).ok()).map(IpAddr::from));
    }
    out
}

/// Port 53 at `glue`, or — for a name outside the zone — at what the system's resolver
/// says (an authoritative server has no resolver of its own: [`Network::addresses`]).
async fn addresses(network: &Arc<dyn Network>, ns: Name, glue: Vec<IpAddr>) -> Vec<SocketAddr> {
    if !glue.is_empty() {
        return glue.into_iter().map(|ip| SocketAddr::new(ip, 53)).collect();
    }
    let (network, host) = (Arc::clone(network), ns.clone());
    let resolved = tokio::task::spawn_blocking(move || network.addresses(&host)).await;
    match resolved {
        Ok(Ok(addrs)) => addrs.into_iter().map(|ip| SocketAddr::new(ip, 53)).collect(),
        _ => {
            warn!(ns = %ns, "NOTIFY not sent to a name server whose address cannot be found");
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_servers_but_the_primary_with_their_glue() {
        let text = "$ORIGIN example.\n$TTL 300\n@ SOA ns1 h 1 60 60 600 60\n@ NS ns1\n@ NS ns2\n\
                    @ NS ns.example.net.\nns1 A 192.0.2.1\nns2 A 192.0.2.2\nns2 AAAA 2001:db8::2\n";
        let origin: Name = "example.".parse().unwrap();
        let zone = tern_zone::load_bytes(
            text.as_bytes(),
            std::path::Path::new("t"),
            &origin,
            &Default::default(),
        )
        .unwrap()
        .contents;
        let mut targets: Vec<(String, Vec<IpAddr>)> =
            ns_targets(&zone).into_iter().map(|(n, g)| (n.to_string(), g)).collect();
        targets.sort();
        let v4 = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(
            targets,
            [
                ("ns.example.net.".to_owned(), vec![]),
                ("ns2.example.".to_owned(), vec![v4("192.0.2.2"), v4("2001:db8::2")]),
            ]
        );
    }
}
