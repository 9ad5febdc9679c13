//! NOTIFY out (RFC 1996 §3.6): after every change, each address of each `notify`
//! remote is told, signed with the remote's key when it has one, and retried with a
//! growing pause until it acknowledges — up to [`ATTEMPTS`] times (about half an hour),
//! since a secondary also checks on its own when its refresh timer fires. A newer
//! change replaces the NOTIFYs still being retried for an older one.

use std::time::Duration;

use tern_zone::RecordData;
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};

use crate::client::{self, Peer};
use crate::config::ZonePlan;

/// Tries per target.
pub const ATTEMPTS: u32 = 12;
/// The first pause between tries; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_secs(1);
const MAX_PAUSE: Duration = Duration::from_secs(300);

/// Starts one task per target address.
pub fn send(plan: &ZonePlan, soa: &RecordData, timeout: Duration) -> Vec<JoinHandle<()>> {
    let mut tasks = Vec::new();
    for remote in &plan.notify {
        for &addr in &remote.addrs {
            let (zone, soa, key, id) =
                (plan.name.clone(), soa.clone(), remote.key.clone(), remote.id.clone());
            tasks.push(tokio::spawn(async move {
                let serial = soa.soa_serial().unwrap_or(0);
                let mut pause = FIRST_PAUSE;
                for attempt in 1..=ATTEMPTS {
                    let (zone2, soa2, key2) = (zone.clone(), soa.clone(), key.clone());
                    let sent = tokio::task::spawn_blocking(move || {
                        client::notify(Peer { addr, key: key2.as_ref() }, &zone2, &soa2, timeout)
                    })
                    .await;
                    match sent {
                        Ok(Ok(())) => {
                            info!(zone = %zone, remote = %id, peer = %addr, serial, "NOTIFY acknowledged");
                            return;
                        }
                        Ok(Err(why)) => debug!(zone = %zone, peer = %addr, attempt, "NOTIFY not acknowledged: {why}"),
                        Err(_) => return,
                    }
                    if attempt == ATTEMPTS {
                        warn!(zone = %zone, remote = %id, peer = %addr, serial, "NOTIFY given up after {ATTEMPTS} tries");
                        return;
                    }
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(MAX_PAUSE);
                }
            }));
        }
    }
    tasks
}
