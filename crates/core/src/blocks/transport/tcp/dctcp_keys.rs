//! DCTCP's key (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM '10), the `[host.dctcp]`
//! table: apart from the model so the `[host]` section can hold it.

use serde::{Deserialize, Serialize};

/// DCTCP's constants, the `[host.dctcp]` table.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpKeys {
    /// The estimation gain g (1/16 in the paper).
    pub g: f64,
}

impl Default for DctcpKeys {
    fn default() -> Self {
        DctcpKeys { g: 1.0 / 16.0 }
    }
}
