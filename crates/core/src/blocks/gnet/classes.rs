//! GNet's traffic classes on virtual channels (Gibson et al., "Aquila: A unified, low-latency
//! fabric for datacenter networks", NSDI '22, §3.1, §3.3, §3.4): the VCs of a link are split
//! into classes, each with its own routing VCs, and every GNet cell rides the class its kind
//! is placed in. An output serves the classes by strict priority, the first class first (what
//! the VC router offers between classes), so a class ahead of another never queues behind it.
//!
//! The paper puts RTS cells on VCs of their own at high priority (§3.3), treats a 1RMA Req as a
//! solicitation like a CTS (§3.4), and maps "roughly half" of the VCs to low-latency messages
//! that 1RMA shares with low-latency IP (§3.4); its Fig. 9 runs high-priority 1RMA on VCs apart
//! from bulk IP and low-priority 1RMA on the bulk IP's VCs (§5.1). A layout lists the classes
//! in priority order, each with the kinds it carries. The data cells of IP class of service
//! `c` may have a class of their own (`ip_data_c`, as the paper's ten VC classes include four
//! for IP classes of service); those of a class of service not named ride `ip_data`'s.

use super::wire::MAX_CLASSES_OF_SERVICE;

/// What a GNet cell carries, as a class layout places it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traffic {
    /// RTS cells (§3.3).
    Rts = 0,
    /// CTS and CTD cells, the IP solicitations (§3.3).
    Cts = 1,
    /// 1RMA Req cells, a read's request and solicitation at once (§3.4).
    Req = 2,
    /// Resp cells of high-priority 1RMA reads.
    RespHigh = 3,
    /// Resp cells of low-priority 1RMA reads.
    RespLow = 4,
    /// Data cells of IP packets.
    IpData = 5,
}

/// Every kind, by its name in a layout.
pub const TRAFFIC_NAMES: [(&str, Traffic); 6] = [
    ("rts", Traffic::Rts),
    ("cts", Traffic::Cts),
    ("req", Traffic::Req),
    ("resp_high", Traffic::RespHigh),
    ("resp_low", Traffic::RespLow),
    ("ip_data", Traffic::IpData),
];

impl Traffic {
    /// The kind called `name`.
    pub fn by_name(name: &str) -> Option<Traffic> {
        TRAFFIC_NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, t)| t)
    }
}

/// Which class each kind rides, classes numbered in priority order (0 first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassLayout {
    class_of: [u8; 6],
    /// Per IP class of service: the class its data cells ride.
    data_class_of: [u8; MAX_CLASSES_OF_SERVICE],
    /// Bit `c` set where the layout names `ip_data_<c>`.
    services_named: u8,
    classes: u8,
}

/// The IP class of service a layout name `ip_data_<c>` gives its data cells a class of their
/// own, if `name` is one.
fn class_of_service_named(name: &str) -> Option<usize> {
    let class: usize = name.strip_prefix("ip_data_")?.parse().ok()?;
    (class < MAX_CLASSES_OF_SERVICE).then_some(class)
}

impl ClassLayout {
    /// The layout of `classes`, each the names of the kinds it carries, in priority order:
    /// every kind in exactly one class, the RTS in the first (it is routed deterministically,
    /// §3.3). The error says what is wrong.
    pub fn from_names(classes: &[Vec<String>]) -> Result<ClassLayout, String> {
        if classes.is_empty() || classes.len() > u8::MAX as usize {
            return Err(format!("expected 1 to 255 classes, got {}", classes.len()));
        }
        let mut class_of = [u8::MAX; 6];
        let mut data_class_of = [u8::MAX; MAX_CLASSES_OF_SERVICE];
        let mut services_named = 0u8;
        for (class, names) in classes.iter().enumerate() {
            if names.is_empty() {
                return Err(format!(
                    "class {class} carries nothing: expected at least one kind"
                ));
            }
            for name in names {
                if let Some(service) = class_of_service_named(name) {
                    if data_class_of[service] != u8::MAX {
                        return Err(format!(
                            "{name:?} is placed twice: expected each kind in one class"
                        ));
                    }
                    data_class_of[service] = class as u8;
                    services_named |= 1 << service;
                    continue;
                }
                let Some(kind) = Traffic::by_name(name) else {
                    let known: Vec<&str> = TRAFFIC_NAMES.iter().map(|(n, _)| *n).collect();
                    return Err(format!(
                        "expected kinds among {}, ip_data_0 to ip_data_7, got {name:?}",
                        known.join(", ")
                    ));
                };
                if class_of[kind as usize] != u8::MAX {
                    return Err(format!(
                        "{name:?} is placed twice: expected each kind in one class"
                    ));
                }
                class_of[kind as usize] = class as u8;
            }
        }
        if let Some(&(name, _)) = TRAFFIC_NAMES
            .iter()
            .find(|(_, t)| class_of[*t as usize] == u8::MAX)
        {
            return Err(format!(
                "{name:?} is in no class: expected every kind placed"
            ));
        }
        if class_of[Traffic::Rts as usize] != 0 {
            return Err("expected \"rts\" in the first class (RTS cells are routed deterministically on the first class's VCs, §3.3)".into());
        }
        let ip_data = class_of[Traffic::IpData as usize];
        for class in data_class_of.iter_mut().filter(|c| **c == u8::MAX) {
            *class = ip_data;
        }
        Ok(ClassLayout {
            class_of,
            data_class_of,
            services_named,
            classes: classes.len() as u8,
        })
    }

    /// Today's two classes: RTS, CTS and CTD first; IP data and 1RMA after.
    pub fn control_data() -> ClassLayout {
        let names = |kinds: &[&str]| kinds.iter().map(|k| k.to_string()).collect();
        let classes = [
            names(&["rts", "cts"]),
            names(&["ip_data", "req", "resp_high", "resp_low"]),
        ];
        ClassLayout::from_names(&classes).expect("a valid layout")
    }

    /// Classes in the layout.
    pub fn classes(&self) -> u8 {
        self.classes
    }

    /// The class `kind` rides (for IP data: the data of classes of service not named apart).
    pub fn class_of(&self, kind: Traffic) -> u8 {
        self.class_of[kind as usize]
    }

    /// The class the data cells of IP class of service `service` ride.
    pub fn data_class_of(&self, service: u8) -> u8 {
        self.data_class_of[service as usize]
    }

    /// The highest IP class of service the layout names (`ip_data_<c>`), if any.
    pub fn last_service_named(&self) -> Option<u8> {
        (self.services_named != 0).then(|| 7 - self.services_named.leading_zeros() as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(classes: &[&[&str]]) -> Result<ClassLayout, String> {
        let classes: Vec<Vec<String>> = classes
            .iter()
            .map(|c| c.iter().map(|k| k.to_string()).collect())
            .collect();
        ClassLayout::from_names(&classes)
    }

    /// The five classes of our reading of the paper's set: each kind where it is placed.
    #[test]
    fn a_layout_places_each_kind_in_its_class() {
        let l = layout(&[
            &["rts"],
            &["cts"],
            &["req"],
            &["resp_high"],
            &["ip_data", "resp_low"],
        ])
        .unwrap();
        assert_eq!(l.classes(), 5);
        assert_eq!(l.class_of(Traffic::Req), 2);
        assert_eq!(l.class_of(Traffic::RespLow), l.class_of(Traffic::IpData));
        let two = ClassLayout::control_data();
        assert_eq!((two.classes(), two.class_of(Traffic::Cts)), (2, 0));
        assert_eq!(two.class_of(Traffic::Req), 1);
    }

    /// The data of an IP class of service named apart rides its own class; the data of the
    /// others rides `ip_data`'s.
    #[test]
    fn a_class_of_service_named_apart_rides_its_own_class() {
        let l = layout(&[
            &["rts", "cts"],
            &["ip_data_1"],
            &["ip_data", "req", "resp_high", "resp_low"],
        ])
        .unwrap();
        assert_eq!(l.data_class_of(1), 1);
        assert_eq!((l.data_class_of(0), l.data_class_of(7)), (2, 2));
        assert_eq!(l.last_service_named(), Some(1));
        // Named beside ip_data, a class of service is still named.
        let beside = layout(&[
            &["rts", "cts"],
            &["ip_data", "ip_data_5", "req", "resp_high", "resp_low"],
        ]);
        assert_eq!(beside.unwrap().last_service_named(), Some(5));
        assert_eq!(ClassLayout::control_data().last_service_named(), None);
        let all = ["rts", "cts", "req", "resp_high", "resp_low", "ip_data"];
        let twice = layout(&[&all, &["ip_data_0", "ip_data_0"]]).unwrap_err();
        assert!(twice.contains("\"ip_data_0\" is placed twice"), "{twice}");
        let beyond = layout(&[&all, &["ip_data_8"]]).unwrap_err();
        assert!(beyond.contains("ip_data_0 to ip_data_7"), "{beyond}");
    }

    /// A kind missing, placed twice, unknown, an empty class or the RTS after the first class
    /// is refused, and the message says which.
    #[test]
    fn a_layout_refuses_what_it_cannot_place() {
        let all = ["cts", "req", "resp_high", "resp_low", "ip_data"];
        assert!(layout(&[&["rts"], &all[..4]])
            .unwrap_err()
            .contains("\"ip_data\" is in no class"));
        assert!(layout(&[&["rts", "cts"], &all])
            .unwrap_err()
            .contains("placed twice"));
        assert!(layout(&[&["rts", "x"], &all])
            .unwrap_err()
            .contains("got \"x\""));
        assert!(layout(&[&["rts"], &[], &all])
            .unwrap_err()
            .contains("class 1 carries nothing"));
        assert!(layout(&[&all, &["rts"]])
            .unwrap_err()
            .contains("first class"));
    }
}
