//! `[xdp]`: the AF_XDP data plane for DNS over UDP (see [`crate::io::xdp`]). Off unless an
//! interface is named.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

/// `[xdp]`: which interface and queues serve UDP through AF_XDP.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct XdpConfig {
    /// The interface; none (the default) leaves XDP off.
    #[serde(default)]
    pub interface: Option<String>,
    /// Its receive queues to serve, one worker each: `"all"` (the default) or a list.
    #[serde(default)]
    pub queues: XdpQueues,
    /// `auto` (native where the driver has it, else generic), `native` or `generic`.
    #[serde(default)]
    pub mode: XdpMode,
}

/// The receive queues served.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum XdpQueues {
    /// Every queue of the interface.
    #[default]
    All,
    /// These queues (1 to 256 of them, each listed once).
    List(Vec<u32>),
}

/// Where the XDP program runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum XdpMode {
    /// Native if the driver has it, generic otherwise.
    #[default]
    Auto,
    /// In the driver only.
    Native,
    /// In the kernel's generic path only (`XDP_FLAGS_SKB_MODE`).
    Generic,
}

impl<'de> Deserialize<'de> for XdpQueues {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(QueuesVisitor)
    }
}

struct QueuesVisitor;

impl<'de> Visitor<'de> for QueuesVisitor {
    type Value = XdpQueues;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("`\"all\"` or a list of queue numbers, such as `[0, 1]`")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<XdpQueues, E> {
        match text {
            "all" => Ok(XdpQueues::All),
            _ => Err(E::custom(format!("`{text}`: write `\"all\"` or a list such as `[0, 1]`"))),
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<XdpQueues, A::Error> {
        let mut queues: Vec<u32> = Vec::new();
        while let Some(queue) = seq.next_element::<u32>()? {
            if queues.contains(&queue) {
                return Err(de::Error::custom(format!("queue {queue} is listed twice")));
            }
            queues.push(queue);
        }
        if queues.is_empty() || queues.len() > 256 {
            return Err(de::Error::custom("list 1 to 256 queues, or write `\"all\"`"));
        }
        Ok(XdpQueues::List(queues))
    }
}
