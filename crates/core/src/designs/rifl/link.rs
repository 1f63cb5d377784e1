//! The RIFL Layer 1 link study (Shen and Chow 2023, §II-A): one full-duplex 100 Gbit/s link, both
//! ends sending, with bit errors drawn from a bit error rate, corrected by the retransmitting link
//! of [`crate::blocks::retransmission`]. It measures what the paper claims of Layer 1: goodput
//! against bit error rate and cable length, pause time and error-to-correction time, and that no
//! frame is ever lost, duplicated or reordered.
//!
//! Scenario (design `rifl_link`): `link.rate_gbps`, `link.length_m` (fibre at `link.ns_per_m`),
//! `link.fixed_latency_ns` (transceivers and pipeline), `link.ber`, `link.frame_bytes` (a power
//! of two, 8 to 256), `traffic.load` (fraction of frame slots with new data, each direction),
//! `nic.rx_buffer_frames` and `nic.drain_load` (the receiving host's buffer and the fraction of
//! frame times it takes a frame out: below 1, ON/OFF flow control acts), `run.duration_ns`,
//! `run.seed`.

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use crate::blocks::bit_errors::{frame_error_probability, BitErrors, FrameErrors};
use crate::blocks::retransmission::{Layer1Link, SlotInput};
use crate::blocks::stream_kind;
use crate::engine::kernel::{run_events, Clock, Events, Model, Steps};
use crate::engine::queue::{CalendarQueue, EventQueue, Phase};
use crate::engine::rng::{stream, ComponentId, Rng};
use crate::engine::stats::{LatencyHistogram, Percentiles};
use crate::engine::time::{
    duration_expected, duration_fits, ps_from_ns, serialization_ps, TimePs, PS_PER_NS,
};
use crate::run::{Design, Report, RunError};
use crate::scenario::ScenarioError;
use std::time::Instant;

/// The link study's scenario.
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkScenario {
    /// The design: `"rifl_link"` (every other design has keys of its own: `cellfabric keys`).
    pub design: String,
    /// Run length and seed.
    #[serde(default)]
    pub run: RunSection,
    /// The link.
    #[serde(default)]
    pub link: LinkSection,
    /// What each end offers.
    #[serde(default)]
    pub traffic: TrafficSection,
    /// The receiving hosts.
    #[serde(default)]
    pub nic: NicSection,
}

/// Run length and seed.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RunSection {
    /// Seed of every random stream.
    pub seed: u64,
    /// Simulated time in nanoseconds.
    pub duration_ns: f64,
}

/// The most frames a one-way trip may hold (the link simulates each).
const MAX_TRIP_FRAMES: u64 = 1_000_000;

impl Default for RunSection {
    fn default() -> Self {
        RunSection {
            seed: 1,
            duration_ns: 10_000_000.0,
        }
    }
}

/// The link.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LinkSection {
    /// Line rate in Gbit/s.
    pub rate_gbps: f64,
    /// Cable length in metres.
    pub length_m: f64,
    /// Propagation delay per metre, in nanoseconds (5 for fibre).
    pub ns_per_m: f64,
    /// Fixed one-way latency outside the cable (transceivers, Layer 1 pipeline), nanoseconds.
    pub fixed_latency_ns: f64,
    /// Bit error rate, each direction (between bursts, with bursts).
    pub ber: f64,
    /// Bit error rate inside error bursts; above 0 errors fall by the Gilbert–Elliott model
    /// (`ber` between bursts, this rate inside them).
    pub error_burst_ber: f64,
    /// With bursts: the mean length of a burst, in frames (geometric, at least 1).
    pub error_burst_frames: f64,
    /// With bursts: the mean stretch between bursts, in frames (geometric, at least 1).
    pub error_burst_gap_frames: f64,
    /// Layer 1 frame size in bytes (a power of two, 8 to 256).
    pub frame_bytes: u32,
}

impl Default for LinkSection {
    fn default() -> Self {
        LinkSection {
            rate_gbps: 100.0,
            length_m: 10.0,
            ns_per_m: 5.0,
            fixed_latency_ns: 0.0,
            ber: 0.0,
            error_burst_ber: 0.0,
            error_burst_frames: 0.0,
            error_burst_gap_frames: 0.0,
            frame_bytes: 256,
        }
    }
}

/// What each end offers.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficSection {
    /// Fraction of frame slots in which a new data frame arrives for sending (1: saturated).
    pub load: f64,
}

impl Default for TrafficSection {
    fn default() -> Self {
        TrafficSection { load: 1.0 }
    }
}

/// The receiving hosts.
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct NicSection {
    /// Receive buffer in frames; absent: two round trips (the paper asks for at least 1.5).
    pub rx_buffer_frames: Option<u64>,
    /// Fraction of frame times in which the host takes a frame out of the buffer (1: always).
    pub drain_load: Option<f64>,
}

fn invalid(key: &str, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        key: key.into(),
        message: message.into(),
    }
}

impl LinkScenario {
    /// Parses and validates a link-study scenario from JSON text.
    pub fn from_json(text: &str) -> Result<LinkScenario, ScenarioError> {
        let scenario: LinkScenario = crate::scenario::parse(text)?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// The bit error keys: in range, and the burst shape only with a burst rate.
    fn validate_bit_errors(&self) -> Result<(), ScenarioError> {
        let link = &self.link;
        if self.bit_errors()? == (BitErrors::Independent { ber: link.ber }) {
            for (key, frames) in [
                ("link.error_burst_frames", link.error_burst_frames),
                ("link.error_burst_gap_frames", link.error_burst_gap_frames),
            ] {
                if frames != 0.0 {
                    return Err(invalid(
                        key,
                        "unused without bursts: set link.error_burst_ber above 0, or leave it out",
                    ));
                }
            }
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        let (run, link) = (&self.run, &self.link);
        let non_negative = |v: f64| v.is_finite() && v >= 0.0;
        if !duration_fits(run.duration_ns) {
            return Err(invalid("run.duration_ns", duration_expected()));
        }
        if !(link.rate_gbps.is_finite() && link.rate_gbps >= 0.001) {
            return Err(invalid(
                "link.rate_gbps",
                "expected a rate of at least 0.001 Gbit/s",
            ));
        }
        for (key, value) in [
            ("link.length_m", link.length_m),
            ("link.ns_per_m", link.ns_per_m),
            ("link.fixed_latency_ns", link.fixed_latency_ns),
        ] {
            if !non_negative(value) {
                return Err(invalid(key, "expected a non-negative number"));
            }
        }
        self.validate_bit_errors()?;
        if !(link.frame_bytes.is_power_of_two() && (8..=256).contains(&link.frame_bytes)) {
            return Err(invalid(
                "link.frame_bytes",
                format!(
                    "expected a power of two from 8 to 256 bytes, got {}",
                    link.frame_bytes
                ),
            ));
        }
        // The link keeps every frame of a one-way trip in flight: bound the trip (4 000 km of
        // fibre at 100 Gbit/s; the fuzzer found 10^12 m asking for terabytes).
        let trip_frames = self.latency_ps().div_ceil(self.frame_ps());
        if trip_frames > MAX_TRIP_FRAMES {
            return Err(invalid(
                "link.length_m",
                format!(
                    "the one-way trip (length, ns_per_m and fixed_latency_ns) would hold {trip_frames} frames; expected at most {MAX_TRIP_FRAMES}"
                ),
            ));
        }
        let load = self.traffic.load;
        if !(load == 0.0 || crate::scenario::is_load(load)) {
            return Err(invalid(
                "traffic.load",
                "expected 0 (no data) or a fraction from 1e-6 to 1",
            ));
        }
        if self
            .nic
            .drain_load
            .is_some_and(|d| !crate::scenario::is_load(d))
        {
            return Err(invalid(
                "nic.drain_load",
                "expected a fraction above 0, at most 1",
            ));
        }
        let rtt = Layer1Link::new(self.latency_slots()).rtt_slots() as u64;
        if self.nic.rx_buffer_frames.is_some_and(|b| 2 * b < 3 * rtt) {
            return Err(invalid(
                "nic.rx_buffer_frames",
                format!(
                    "the receive buffer must hold 1.5 round trips (§IV-D): at least {} frames",
                    (3 * rtt).div_ceil(2)
                ),
            ));
        }
        let slots = self.end_ps() / self.frame_ps();
        if slots == 0 || slots > 1 << 40 {
            return Err(invalid(
                "run.duration_ns",
                "expected between one frame time and 2^40 frame times",
            ));
        }
        Ok(())
    }

    fn rate_bps(&self) -> u64 {
        (self.link.rate_gbps * 1e9).round() as u64
    }

    /// Length of one frame time.
    pub fn frame_ps(&self) -> TimePs {
        serialization_ps(self.link.frame_bytes as u64, self.rate_bps())
    }

    /// One-way latency beyond serialization, in picoseconds.
    pub fn latency_ps(&self) -> TimePs {
        let link = &self.link;
        ((link.length_m * link.ns_per_m + link.fixed_latency_ns) * PS_PER_NS as f64).round()
            as TimePs
    }

    /// One-way latency in whole frame times (rounded up: the receiver acts on whole frames).
    pub fn latency_slots(&self) -> u32 {
        self.latency_ps()
            .div_ceil(self.frame_ps())
            .min(u32::MAX as u64 / 4) as u32
    }

    fn end_ps(&self) -> TimePs {
        ps_from_ns(self.run.duration_ns)
    }

    /// How bit errors fall on the cable (the keys checked, naming the one at fault).
    pub fn bit_errors(&self) -> Result<BitErrors, ScenarioError> {
        let link = &self.link;
        BitErrors::from_keys(
            link.ber,
            link.error_burst_ber,
            link.error_burst_frames,
            link.error_burst_gap_frames,
        )
    }

    /// Probability that a frame has at least one bit error, at the long-run bit error rate.
    pub fn frame_error_probability(&self) -> f64 {
        let ber = self
            .bit_errors()
            .map_or(self.link.ber, BitErrors::long_run_ber);
        frame_error_probability(ber, self.link.frame_bytes as u64)
    }
}

/// One end's host: frames waiting to be sent and the receive buffer.
struct Host {
    source: Rng,
    drain: Rng,
    waiting_frames: u64,
    rx_frames: u64,
    rx_max_frames: u64,
}

/// The link study's headline numbers.
#[derive(Clone, Debug, Serialize)]
pub struct LinkSummary {
    /// Always `rifl_link`.
    pub design: &'static str,
    /// Seed of the run.
    pub seed: u64,
    /// The cable: its errors, frames and round trip.
    #[serde(flatten)]
    pub cable: CableFigures,
    /// New data frames offered per frame time, each direction.
    pub offered_load: f64,
    /// Data frames delivered per frame time, averaged over both directions.
    pub goodput: f64,
    /// What the retransmission did, both ends.
    #[serde(flatten)]
    pub replay: ReplayCounts,
    /// The frame account, counted where the frames are.
    #[serde(flatten)]
    pub frames: FrameCounts,
    /// Frame slots simulated one by one (quiet stretches are skipped in one step).
    pub events: u64,
    /// Simulated time.
    pub sim_time_ps: u64,
}

/// The cable: its errors, frames and round trip.
#[derive(Clone, Debug, Serialize)]
pub struct CableFigures {
    /// Long-run bit error rate, each direction.
    pub ber: f64,
    /// How the errors fall: `independent` or `gilbert_elliott` (bursts).
    pub error_model: &'static str,
    /// Probability that a frame is corrupted, at the long-run bit error rate.
    pub frame_error_probability: f64,
    /// Layer 1 frame size.
    pub frame_bytes: u32,
    /// Cable length.
    pub length_m: f64,
    /// Round trip: send a frame, act on the far end's reaction.
    pub rtt_ns: f64,
    /// Round trip in frame times.
    pub rtt_frames: u32,
}

/// What the retransmission did, both ends.
#[derive(Clone, Debug, Serialize)]
pub struct ReplayCounts {
    /// Frames corrupted on the wire (CRC failures detected), both directions.
    pub errors_detected: u64,
    /// Retransmission cycles run, both ends.
    pub retransmission_cycles: u64,
    /// Frames sent again, both ends.
    pub frames_replayed: u64,
    /// Fraction of frame times an end could not send new data because of retransmission.
    pub pause_fraction: f64,
    /// Mean pause of new data per retransmission cycle, in round trips (both ends' pauses).
    pub pause_per_error_rtt: f64,
    /// From a corrupted frame to both ends sending new data again (overlapping errors
    /// form one episode), nanoseconds.
    pub recovery_ns: Percentiles,
    /// The same in round trips.
    pub recovery_rtt: Percentiles,
    /// Frame times in which an end's receive buffer had its peer stopped (ON/OFF).
    pub xoff_frame_times: u64,
    /// Largest receive-buffer occupancy seen, frames.
    pub rx_buffer_max_frames: u64,
}

/// The frame account, counted where the frames are.
#[derive(Clone, Debug, Serialize)]
pub struct FrameCounts {
    /// New data frames sent, both directions.
    pub frames_injected: u64,
    /// Data frames delivered exactly once and in order.
    pub frames_delivered: u64,
    /// Data frames sent but not yet delivered at the end, counted in the senders' replay
    /// buffers.
    pub frames_in_flight: u64,
    /// Replayed frames the receiver already had.
    pub duplicates_discarded: u64,
}

/// Per-direction counters.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DirectionTable {
    /// `0→1` or `1→0`.
    pub direction: Vec<String>,
    /// Frames sent for the first time.
    pub frames_new: Vec<u64>,
    /// Frames delivered.
    pub frames_delivered: Vec<u64>,
    /// Corrupted frames detected at the receiving end.
    pub errors_detected: Vec<u64>,
    /// Cycles the sending end ran.
    pub retransmission_cycles: Vec<u64>,
    /// Frames the sending end replayed.
    pub frames_replayed: Vec<u64>,
    /// Frame times the sending end paused new data.
    pub pause_frame_times: Vec<u64>,
    /// Delivered frames per frame time.
    pub goodput: Vec<f64>,
}

/// The link study's tables.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LinkTables {
    /// One row per direction.
    pub directions: DirectionTable,
}

/// A running link study.
pub struct LinkStudy {
    scenario: LinkScenario,
    link: Layer1Link,
    bit_errors: BitErrors,
    errors: [FrameErrors; 2],
    hosts: [Host; 2],
    rx_buffer_frames: u64,
    load: f64,
    drain_load: f64,
    frame_ps: TimePs,
    end_slot: u64,
    /// One pending event: the next frame time to simulate.
    queue: CalendarQueue<()>,
    xoff_slots: u64,
    /// Start of the current error episode.
    episode_start: Option<u64>,
    recovery: LatencyHistogram,
}

impl LinkStudy {
    /// Builds the study a validated scenario describes.
    pub fn new(scenario: LinkScenario) -> Self {
        let seed = scenario.run.seed;
        let id = |kind, index| ComponentId { kind, index };
        let link = Layer1Link::new(scenario.latency_slots());
        let bit_errors = scenario.bit_errors().expect("validated");
        let frame_bytes = scenario.link.frame_bytes as u64;
        let rtt = link.rtt_slots() as u64;
        let hosts = [0, 1].map(|i| Host {
            source: stream(seed, id(stream_kind::LINK_STUDY_SOURCE, i)),
            drain: stream(seed, id(stream_kind::LINK_STUDY_DRAIN, i)),
            waiting_frames: 0,
            rx_frames: 0,
            rx_max_frames: 0,
        });
        LinkStudy {
            bit_errors,
            errors: [0, 1].map(|i| {
                let rng = stream(seed, id(stream_kind::LINK_STUDY_ERRORS, i));
                FrameErrors::new(bit_errors, frame_bytes, rng)
            }),
            hosts,
            rx_buffer_frames: scenario.nic.rx_buffer_frames.unwrap_or(2 * rtt),
            load: scenario.traffic.load,
            drain_load: scenario.nic.drain_load.unwrap_or(1.0),
            frame_ps: scenario.frame_ps(),
            end_slot: scenario.end_ps() / scenario.frame_ps(),
            link,
            scenario,
            queue: {
                let mut queue = CalendarQueue::for_gap(1);
                queue.push(0, Phase::Clock, 0, ());
                queue
            },
            xoff_slots: 0,
            episode_start: None,
            recovery: LatencyHistogram::new(),
        }
    }

    fn saturated(&self) -> bool {
        self.load >= 1.0 && self.drain_load >= 1.0
    }

    fn step(&mut self) {
        let slot = self.link.slot();
        let rtt = self.link.rtt_slots() as u64;
        let mut input = [SlotInput::default(); 2];
        for (end, (host, errors)) in self.hosts.iter_mut().zip(&mut self.errors).enumerate() {
            if self.load >= 1.0 || host.source.gen_bool(self.load) {
                host.waiting_frames += 1;
            }
            let xoff = host.rx_frames + rtt >= self.rx_buffer_frames;
            self.xoff_slots += xoff as u64;
            input[end] = SlotInput {
                has_data: host.waiting_frames > 0,
                corrupt: errors.corrupts(slot),
                xoff,
            };
        }
        let output = self.link.step(input);
        for (host, out) in self.hosts.iter_mut().zip(output) {
            host.waiting_frames -= out.sent_new as u64;
            host.rx_frames += out.delivered.is_some() as u64;
            host.rx_max_frames = host.rx_max_frames.max(host.rx_frames);
            if host.rx_frames > 0
                && (self.drain_load >= 1.0 || host.drain.gen_bool(self.drain_load))
            {
                host.rx_frames -= 1;
            }
        }
        let corrupted = input.iter().any(|i| i.corrupt);
        match self.episode_start {
            None if corrupted => self.episode_start = Some(slot),
            Some(start) if !self.link.is_recovering() => {
                self.recovery.record((slot - start) * self.frame_ps);
                self.episode_start = None;
            }
            _ => {}
        }
    }

    fn summary(&self, clock: &Clock) -> LinkSummary {
        let link = &self.link;
        let slots = link.slot().max(1);
        let rtt = link.rtt_slots();
        let total = |f: fn(&crate::blocks::retransmission::EndCounters) -> u64| {
            f(link.counters(0)) + f(link.counters(1))
        };
        let cycles = total(|c| c.cycles);
        let rtt_ps = rtt as f64 * self.frame_ps as f64;
        let recovery = self.recovery.percentiles();
        LinkSummary {
            design: "rifl_link",
            seed: self.scenario.run.seed,
            cable: CableFigures {
                ber: self.bit_errors.long_run_ber(),
                error_model: self.bit_errors.name(),
                frame_error_probability: self.scenario.frame_error_probability(),
                frame_bytes: self.scenario.link.frame_bytes,
                length_m: self.scenario.link.length_m,
                rtt_ns: rtt_ps / PS_PER_NS as f64,
                rtt_frames: rtt,
            },
            offered_load: self.load,
            goodput: total(|c| c.frames_delivered) as f64 / (2 * slots) as f64,
            replay: ReplayCounts {
                errors_detected: total(|c| c.errors_detected),
                retransmission_cycles: cycles,
                frames_replayed: total(|c| c.frames_replayed),
                pause_fraction: total(|c| c.pause_slots) as f64 / (2 * slots) as f64,
                pause_per_error_rtt: total(|c| c.pause_slots) as f64
                    / (cycles.max(1) as f64 * rtt as f64),
                recovery_ns: recovery.scaled(PS_PER_NS as f64),
                recovery_rtt: recovery.scaled(rtt_ps),
                xoff_frame_times: self.xoff_slots,
                rx_buffer_max_frames: self
                    .hosts
                    .iter()
                    .map(|h| h.rx_max_frames)
                    .max()
                    .unwrap_or(0),
            },
            frames: FrameCounts {
                frames_injected: total(|c| c.frames_new),
                frames_delivered: total(|c| c.frames_delivered),
                frames_in_flight: link.frames_held(0) + link.frames_held(1),
                duplicates_discarded: total(|c| c.duplicates_discarded),
            },
            events: clock.events,
            sim_time_ps: link.slot() * self.frame_ps,
        }
    }

    fn tables(&self) -> LinkTables {
        let mut t = DirectionTable::default();
        let slots = self.link.slot().max(1) as f64;
        for end in 0..2 {
            let (tx, rx) = (self.link.counters(end), self.link.counters(1 - end));
            t.direction.push(format!("{end}→{}", 1 - end));
            t.frames_new.push(tx.frames_new);
            t.frames_delivered.push(rx.frames_delivered);
            t.errors_detected.push(rx.errors_detected);
            t.retransmission_cycles.push(tx.cycles);
            t.frames_replayed.push(tx.frames_replayed);
            t.pause_frame_times.push(tx.pause_slots);
            t.goodput.push(rx.frames_delivered as f64 / slots);
        }
        LinkTables { directions: t }
    }
}

impl Events for LinkStudy {
    type Event = ();

    fn queue(&mut self) -> &mut CalendarQueue<()> {
        &mut self.queue
    }

    /// Simulates the next frame time, or skips a quiet saturated stretch up to the next drawn
    /// error in one step, and schedules the next.
    fn handle(&mut self, _now_ps: TimePs, _event: ()) -> bool {
        let slot = self.link.slot();
        let next_error = self
            .errors
            .iter()
            .map(|e| e.next_slot())
            .min()
            .unwrap_or(u64::MAX);
        let quiet_until = next_error.min(self.end_slot);
        if quiet_until > slot + 1 && self.saturated() && self.link.is_quiet() {
            self.link.skip_saturated(quiet_until - slot);
        } else {
            self.step();
        }
        if self.link.slot() < self.end_slot {
            let next_ps = self.link.slot() * self.frame_ps;
            self.queue.push(next_ps, Phase::Clock, 0, ());
        }
        true
    }
}

impl Model for LinkStudy {
    fn run_until(&mut self, limit_ps: TimePs, deadline: Option<Instant>) -> Steps {
        run_events(self, limit_ps, deadline)
    }

    fn is_idle(&mut self) -> bool {
        self.queue.is_empty()
    }

    fn progress(&self) -> u64 {
        self.link.slot()
    }

    fn delivered(&self) -> u64 {
        self.link.counters(0).frames_delivered + self.link.counters(1).frames_delivered
    }

    /// Frames on the link that must still move; none once the run has reached its last frame
    /// time (no event is left then, and that is the end, not a deadlock).
    fn in_flight(&self) -> u64 {
        if self.link.slot() >= self.end_slot {
            return 0;
        }
        self.link.frames_held(0) + self.link.frames_held(1)
    }

    /// The link advances every frame time; it cannot stall.
    fn stall_ps(&self) -> TimePs {
        TimePs::MAX / 2
    }

    fn stall_report(&self) -> String {
        format!("the link stopped at frame time {}", self.link.slot())
    }
}

impl Design for LinkStudy {
    fn end_ps(&self) -> TimePs {
        self.end_slot * self.frame_ps
    }

    fn report(self, clock: Clock) -> Result<Report, RunError> {
        let summary = self.summary(&clock);
        for end in 0..2 {
            self.link.ledger(end).check(true)?;
        }
        let lost: u64 = (0..2).map(|e| self.link.counters(e).frames_lost).sum();
        if lost > 0 {
            return Err(RunError::LossInLosslessRun(lost));
        }
        if summary.replay.rx_buffer_max_frames > self.rx_buffer_frames {
            return Err(RunError::LossInLosslessRun(
                summary.replay.rx_buffer_max_frames - self.rx_buffer_frames,
            ));
        }
        let perf = clock.perf(Some(("frame times", self.link.slot())));
        Ok(Report::new(&summary, &self.tables(), perf))
    }
}

/// Validates a link-study scenario (JSON text) and builds it.
pub fn build(json: &str) -> Result<LinkStudy, ScenarioError> {
    Ok(LinkStudy::new(LinkScenario::from_json(json)?))
}
