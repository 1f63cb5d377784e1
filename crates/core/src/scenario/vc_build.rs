//! What the `vc` section checks and builds: the VC routers' spec.

use super::vc::{OutputArbitrationName, SwitchingName, SwitchingUnitName, VcConfig, MAX_VCS};
use super::{invalid, Scenario, ScenarioError, SchedulerName, TopologyName};
use crate::blocks::flow_control::FlowControlKind;
use crate::blocks::vc_router::allocation::SwitchAllocatorKind;
use crate::blocks::vc_router::assignment::VcRule;
use crate::blocks::vc_router::output::OutputArbitration;
use crate::blocks::vc_router::{Switching, SwitchingUnit, VcSpec};

impl Scenario {
    /// True if the switches are VC routers.
    pub fn uses_vcs(&self) -> bool {
        matches!(
            self.switch.scheduler,
            SchedulerName::VcSeparable | SchedulerName::VcIslip
        )
    }

    /// The routers' switching unit: `vc.switching_unit`, or by default whole cells on the
    /// Clique (Aquila's TiN) and flits elsewhere.
    pub fn switching_unit_name(&self) -> SwitchingUnitName {
        let written = self.vc.as_ref().and_then(|vc| vc.switching_unit);
        written.unwrap_or(match self.topology.kind {
            TopologyName::Clique => SwitchingUnitName::Cell,
            _ => SwitchingUnitName::Flit,
        })
    }

    /// True if the routers switch whole cells (a GNet cell's flits as one unit).
    pub fn switches_whole_cells(&self) -> bool {
        self.uses_vcs() && self.switching_unit_name() == SwitchingUnitName::Cell
    }

    /// The `vc` section as written, or its defaults.
    pub fn vc_config(&self) -> VcConfig {
        self.vc.clone().unwrap_or_default()
    }

    /// The `vc` section's values: counts, buffers, speed-up, weights, the rule's name, and
    /// the credit flow control VC buffers need.
    pub(super) fn validate_vc(&self) -> Result<(), ScenarioError> {
        if !self.uses_vcs() {
            return match self.vc {
                Some(_) => Err(invalid(
                    "vc",
                    "virtual channels need a VC router: expected switch.scheduler = \"vc_separable\" or \"vc_islip\"",
                )),
                None => Ok(()),
            };
        }
        let vc = self.vc_config();
        if vc.count == 0 || vc.count > MAX_VCS {
            return Err(invalid("vc.count", format!("expected 1 to {MAX_VCS} VCs")));
        }
        if vc.classes == 0 || !vc.count.is_multiple_of(vc.classes) {
            return Err(invalid(
                "vc.classes",
                format!(
                    "expected a class count that divides vc.count ({}) into equal classes, got {}",
                    vc.count, vc.classes
                ),
            ));
        }
        if vc.buffer_cells == 0 {
            return Err(invalid(
                "vc.buffer_cells",
                "expected at least one flit per VC",
            ));
        }
        if !(vc.speedup.is_finite() && (1.0..=64.0).contains(&vc.speedup)) {
            return Err(invalid("vc.speedup", "expected a speed-up of 1 to 64"));
        }
        if VcRule::by_name(&vc.assignment).is_none() {
            let names: Vec<&str> = VcRule::NAMED.iter().map(|(n, _, _)| *n).collect();
            return Err(invalid(
                "vc.assignment",
                format!(
                    "expected one of {}, got {:?}",
                    names.join(", "),
                    vc.assignment
                ),
            ));
        }
        if let Some(weights) = &vc.weights {
            if weights.len() != vc.count as usize || weights.contains(&0) {
                return Err(invalid(
                    "vc.weights",
                    format!("expected {} weights of at least 1, one per VC", vc.count),
                ));
            }
        }
        if let Some(weights) = &vc.class_weights {
            if weights.len() != vc.classes as usize || weights.contains(&0) {
                return Err(invalid(
                    "vc.class_weights",
                    format!(
                        "expected {} weights of at least 1, one per class (vc.classes)",
                        vc.classes
                    ),
                ));
            }
        }
        if self.link.flow_control != FlowControlKind::Credit {
            return Err(invalid(
                "link.flow_control",
                "VC routers protect each VC's buffer with credits: expected \"credit\"",
            ));
        }
        Ok(())
    }

    /// What every VC router is made of, for a scenario whose switches are VC routers.
    pub(super) fn vc_spec(&self) -> Option<VcSpec> {
        if !self.uses_vcs() {
            return None;
        }
        let vc = self.vc_config();
        let iterations = self.switch.iterations;
        let allocator = match self.switch.scheduler {
            SchedulerName::VcIslip => SwitchAllocatorKind::Islip { iterations },
            _ => SwitchAllocatorKind::SeparableInputFirst { iterations },
        };
        let output_arbitration = match vc.output_arbitration {
            OutputArbitrationName::StrictPriority => OutputArbitration::StrictPriority,
            OutputArbitrationName::RoundRobin => OutputArbitration::WeightedRoundRobin {
                weights: vc.weights.unwrap_or_else(|| vec![1; vc.count as usize]),
            },
        };
        // A packet of the routers is a GNet cell under `[gnet]` (a data cell the longest).
        let packet_cells = match self.gnet_spec() {
            Some(gnet) => gnet.data_flits(),
            None => self
                .packet_sizes()
                .max_bytes()
                .div_ceil(self.cell.payload_bytes()),
        };
        let switching = match vc.switching {
            SwitchingName::Wormhole => Switching::Wormhole,
            SwitchingName::VirtualCutThrough => Switching::VirtualCutThrough { packet_cells },
        };
        let unit = match self.switching_unit_name() {
            SwitchingUnitName::Flit => SwitchingUnit::Flit,
            SwitchingUnitName::Cell => SwitchingUnit::Cell {
                flits_by_kind: self.gnet_spec().map_or([1; 8], |g| g.flits_by_kind()),
            },
        };
        let nonminimal_routing = self
            .routing
            .as_ref()
            .and_then(|r| crate::blocks::routing::mode(&r.mode))
            .is_some_and(|m| m.needs_groups);
        Some(VcSpec {
            vcs: vc.count,
            buffer_cells: vc.buffer_cells,
            allocator,
            speedup: vc.speedup,
            output_arbitration,
            credit_delay_slots: vc.credit_delay_cycles,
            rule: VcRule::by_name(&vc.assignment).expect("validated VC rule"),
            switching,
            unit,
            check_dependencies: vc.check_dependencies,
            classes: vc.classes,
            class_arbitration: match vc.class_weights {
                Some(weights) => OutputArbitration::WeightedRoundRobin { weights },
                None => OutputArbitration::StrictPriority,
            },
            nonminimal_routing,
        })
    }
}
