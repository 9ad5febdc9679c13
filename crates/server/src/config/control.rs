//! `[control]`: the control socket `ternctl` talks to (see [`crate::ctl`]).
//!
//! Off unless `socket` is given, as NSD's `remote-control` is: nobody steers the server
//! until the operator says where. The socket is created by the server's user (after
//! privileges are dropped) with `mode`; besides the file's mode, each connection's
//! peer credentials are checked (`SO_PEERCRED`): root, the server's user, and members
//! of `group` (when given) are served, anyone else is refused.

use std::path::PathBuf;

use serde::de::{self, Deserializer};
use serde::Deserialize;

/// `[control]` (see the module comment).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ControlConfig {
    /// The Unix socket's path (relative paths are relative to the configuration file).
    #[serde(default)]
    pub socket: Option<PathBuf>,
    /// The socket file's permission bits (default `0o600`: the server's user alone).
    #[serde(default = "default_mode", deserialize_with = "mode")]
    pub mode: u32,
    /// A group whose members may use the socket too (its mode should then allow the
    /// group, e.g. `0o660`).
    #[serde(default)]
    pub group: Option<String>,
}

impl Default for ControlConfig {
    fn default() -> ControlConfig {
        ControlConfig { socket: None, mode: default_mode(), group: None }
    }
}

/// Where `ternctl` looks when neither `--socket` nor `--config` says (the path the
/// example configuration and the systemd unit's `RuntimeDirectory=tern` give).
pub use tern_ctl::proto::DEFAULT_SOCKET;

fn default_mode() -> u32 {
    0o600
}

/// Permission bits: an integer (write it in octal, `0o660`) of at most `0o777`.
fn mode<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let value = i64::deserialize(d)?;
    match u32::try_from(value) {
        Ok(bits) if bits <= 0o777 => Ok(bits),
        _ => Err(de::Error::custom(format!(
            "{value:#o} is not a file mode: expected permission bits such as 0o600 or 0o660"
        ))),
    }
}
