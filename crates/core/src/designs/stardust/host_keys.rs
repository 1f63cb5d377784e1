//! The `[host]` section of a Stardust scenario: the Ethernet design's host keys, which turn the
//! built-in sources into transport hosts on the adapters' host ports (Zilberman et al., NSDI '19,
//! §6.3: unmodified TCP NewReno over the fabric), and the keys each transport leaves unread.

use serde::{Deserialize, Serialize};

use crate::blocks::transport::dcqcn::HOST_KEYS as DCQCN_HOST_KEYS;
use crate::blocks::transport::host_config::{HostConfig, RECOVERY_KEYS};
use crate::blocks::transport::Transport;
use crate::scenario::{invalid, Named, ScenarioError, UnusedKeys};

/// The `[host]` section: the Ethernet design's host keys, read only when `transport` is
/// given (its presence is what turns the built-in sources into transport hosts).
#[derive(Clone, Debug, Default)]
pub struct HostSection {
    /// True when the scenario names `host.transport`.
    pub transport_set: bool,
    /// The keys, with the Ethernet design's defaults.
    pub config: HostConfig,
}

impl HostSection {
    /// The hosts' transport, if they run one.
    pub fn transport(&self) -> Option<Transport> {
        self.transport_set.then_some(self.config.transport)
    }
}

impl<'de> Deserialize<'de> for HostSection {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let table = serde_json::Map::deserialize(d)?;
        let transport_set = table.contains_key("transport");
        let config = HostConfig::deserialize(serde_json::Value::Object(table))
            .map_err(serde::de::Error::custom)?;
        Ok(HostSection {
            transport_set,
            config,
        })
    }
}

impl Serialize for HostSection {
    /// The section as the run reads it: absent without a transport.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.transport_set {
            true => self.config.serialize(s),
            false => s.serialize_none(),
        }
    }
}

/// The error naming `host.transport` when it is not a transport at all (the `[host]` section
/// is read whole, so a parse error inside it would name only `host`).
pub fn transport_error(json: &str) -> Option<ScenarioError> {
    let value: serde_json::Value = serde_json::from_str(json).ok()?;
    let transport = value.get("host")?.get("transport")?;
    let error = Transport::deserialize(transport).err()?;
    Some(invalid("host.transport", error.to_string()))
}

/// Every key of `[host]` but `transport`, in groups: unused without a transport.
const HOST_KEYS: &[&[&str]] = &[
    &["host.packet_bytes", "host.ack_bytes"],
    RECOVERY_KEYS,
    &[
        "host.dctcp.g",
        "host.subflows",
        "host.ndp.pull_rate",
        "host.ndp.paths",
    ],
    DCQCN_HOST_KEYS,
];

impl HostSection {
    /// Adds the `[host]` keys the hosts do not read: all of them without a transport, and
    /// those of other transports with one.
    pub fn unused(&self, unused: &mut UnusedKeys) {
        let Some(transport) = self.transport() else {
            for keys in HOST_KEYS {
                unused.add(
                    keys,
                    "host.transport",
                    "host.transport absent (the hosts are the built-in sources of traffic)",
                );
            }
            return;
        };
        unused.add(
            &["traffic.packet_bytes", "traffic.load", "traffic.arrival"],
            "host.transport",
            "host.transport set (the hosts' transport paces them; host.packet_bytes sizes their segments)",
        );
        let named = format!("host.transport = {:?}", transport.as_str());
        let (keys, because) = self.config.unused_by_transport();
        unused.add(&keys, "host.transport", because);
        if !matches!(
            transport,
            Transport::Dctcp | Transport::Ndp | Transport::Dcqcn
        ) {
            unused.add(
                &["host.dctcp.g"],
                "host.transport",
                format!("{named} (not ECN-capable)"),
            );
        }
        if transport != Transport::Mptcp {
            unused.add(
                &["host.subflows"],
                "host.transport",
                format!("{named} (one path per flow)"),
            );
        }
        if transport != Transport::Ndp {
            unused.add(&["host.ndp.pull_rate"], "host.transport", &named);
        }
        unused.add(
            &["host.ndp.paths"],
            "host.transport",
            "Stardust's fabric sprays cells itself: no host labels paths",
        );
        if transport != Transport::Dcqcn {
            unused.add(DCQCN_HOST_KEYS, "host.transport", &named);
        }
        if !self.config.delayed_ack && !matches!(transport, Transport::Ndp | Transport::Dcqcn) {
            unused.add(
                &["host.delayed_ack_ns"],
                "host.delayed_ack",
                "host.delayed_ack = false (an ACK per segment)",
            );
        }
    }
}
