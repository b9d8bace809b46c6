//! Which addresses a webhook may never reach: the IANA special-purpose
//! address registries, as one table per IP version.
//!
//! A webhook URL is chosen by the client, but the request is made by the
//! server, from inside its network. Every address the IANA IPv4 and IPv6
//! Special-Purpose Address Registries list (RFC 6890 and its updates:
//! RFC 7723, 8155, 8190, 8215, 9374, 9602, 9637, 9780), plus multicast,
//! the broadcast address and the deprecated IPv6 site-local range, is
//! refused: loopback and private networks are the obvious targets, and the
//! rest (documentation, benchmarking, reserved, protocol-assignment ranges)
//! never hold a legitimate public webhook receiver but may be routed to
//! something internal on a given network.
//!
//! IPv6 has several ways of carrying an IPv4 address, and each is unwrapped
//! so that `::ffff:127.0.0.1` is refused as the loopback address it reaches:
//!
//! - **IPv4-mapped** `::ffff:0:0/96` and **NAT64** `64:ff9b::/96` are the
//!   IPv4 address they carry: allowed exactly when that address is (an
//!   IPv6-only network reaches public IPv4 receivers through NAT64);
//! - **6to4** `2002::/16` (IPv4 at bits 16..48), **Teredo** `2001::/32`
//!   (the client's IPv4 address, bitwise inverted, in the last 32 bits) and
//!   the deprecated **IPv4-compatible** `::/96` are refused whatever they
//!   carry, and the refusal names the embedded address when it is itself
//!   internal.
//!
//! A range is found by its longest matching prefix, so the rows may come in
//! any order and a more specific row (Teredo inside `2001::/23`) wins.
//! The host's own interface addresses are the other half of the rule and
//! change at run time; the delivery side (crate `switchboard-push`) adds them.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A special-purpose range an address fell in: what a refusal says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecialAddress {
    /// The range, described for a person: e.g. `a loopback address
    /// (127.0.0.0/8)`.
    pub class: &'static str,
    /// For IPv6 forms that carry an IPv4 address: that address and its
    /// own class, when it is itself special.
    pub embedded: Option<(Ipv4Addr, &'static str)>,
}

impl fmt::Display for SpecialAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.class)?;
        if let Some((v4, class)) = self.embedded {
            write!(f, " carrying {v4}, {class}")?;
        }
        Ok(())
    }
}

/// How an IPv6 range treats the IPv4 address some forms carry.
#[derive(Debug, Clone, Copy)]
enum V6Rule {
    /// Refused, whatever follows the prefix.
    Refused,
    /// The carried IPv4 address is what is reached: judged as that address.
    Carries(fn(Ipv6Addr) -> Ipv4Addr),
    /// Refused; the carried IPv4 address is named when it is special too.
    RefusedCarrying(fn(Ipv6Addr) -> Ipv4Addr),
}

/// The IPv4 special-purpose registry, multicast and broadcast:
/// (prefix, length, class).
const V4: &[(Ipv4Addr, u8, &str)] = &[
    (
        Ipv4Addr::new(0, 0, 0, 0),
        8,
        "a \"this network\" address (0.0.0.0/8)",
    ),
    (
        Ipv4Addr::new(0, 0, 0, 0),
        32,
        "the unspecified address (0.0.0.0)",
    ),
    (
        Ipv4Addr::new(10, 0, 0, 0),
        8,
        "a private address (10.0.0.0/8)",
    ),
    (
        Ipv4Addr::new(100, 64, 0, 0),
        10,
        "a carrier-grade NAT address (100.64.0.0/10)",
    ),
    (
        Ipv4Addr::new(127, 0, 0, 0),
        8,
        "a loopback address (127.0.0.0/8)",
    ),
    (
        Ipv4Addr::new(169, 254, 0, 0),
        16,
        "a link-local address (169.254.0.0/16, which includes the cloud metadata service 169.254.169.254)",
    ),
    (
        Ipv4Addr::new(172, 16, 0, 0),
        12,
        "a private address (172.16.0.0/12)",
    ),
    (
        Ipv4Addr::new(192, 0, 0, 0),
        24,
        "an IETF protocol assignment address (192.0.0.0/24)",
    ),
    (
        Ipv4Addr::new(192, 0, 2, 0),
        24,
        "a documentation address (TEST-NET-1, 192.0.2.0/24)",
    ),
    (
        Ipv4Addr::new(192, 31, 196, 0),
        24,
        "an AS112 service address (192.31.196.0/24)",
    ),
    (
        Ipv4Addr::new(192, 52, 193, 0),
        24,
        "an AMT relay address (192.52.193.0/24)",
    ),
    (
        Ipv4Addr::new(192, 88, 99, 0),
        24,
        "a 6to4 relay anycast address (192.88.99.0/24)",
    ),
    (
        Ipv4Addr::new(192, 168, 0, 0),
        16,
        "a private address (192.168.0.0/16)",
    ),
    (
        Ipv4Addr::new(192, 175, 48, 0),
        24,
        "an AS112 direct delegation address (192.175.48.0/24)",
    ),
    (
        Ipv4Addr::new(198, 18, 0, 0),
        15,
        "a benchmarking address (198.18.0.0/15)",
    ),
    (
        Ipv4Addr::new(198, 51, 100, 0),
        24,
        "a documentation address (TEST-NET-2, 198.51.100.0/24)",
    ),
    (
        Ipv4Addr::new(203, 0, 113, 0),
        24,
        "a documentation address (TEST-NET-3, 203.0.113.0/24)",
    ),
    (
        Ipv4Addr::new(224, 0, 0, 0),
        4,
        "a multicast address (224.0.0.0/4)",
    ),
    (
        Ipv4Addr::new(240, 0, 0, 0),
        4,
        "a reserved address (240.0.0.0/4)",
    ),
    (
        Ipv4Addr::new(255, 255, 255, 255),
        32,
        "the broadcast address (255.255.255.255)",
    ),
];

const fn v6(s: [u16; 8]) -> Ipv6Addr {
    Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7])
}

/// The last 32 bits (IPv4-mapped, NAT64, IPv4-compatible).
fn low32(ip: Ipv6Addr) -> Ipv4Addr {
    Ipv4Addr::from(ip.to_bits() as u32)
}

/// 6to4: the IPv4 address at bits 16..48.
fn six_to_four(ip: Ipv6Addr) -> Ipv4Addr {
    Ipv4Addr::from((ip.to_bits() >> 80) as u32)
}

/// Teredo: the client's IPv4 address, bitwise inverted, in the last 32 bits.
fn teredo_client(ip: Ipv6Addr) -> Ipv4Addr {
    Ipv4Addr::from(!(ip.to_bits() as u32))
}

/// The IPv6 special-purpose registry, multicast and site-local:
/// (prefix, length, class, rule).
const V6: &[(Ipv6Addr, u8, &str, V6Rule)] = &[
    (
        Ipv6Addr::UNSPECIFIED,
        128,
        "the IPv6 unspecified address (::)",
        V6Rule::Refused,
    ),
    (
        Ipv6Addr::LOCALHOST,
        128,
        "the IPv6 loopback address (::1)",
        V6Rule::Refused,
    ),
    (
        Ipv6Addr::UNSPECIFIED,
        96,
        "a deprecated IPv4-compatible address (::/96)",
        V6Rule::RefusedCarrying(low32),
    ),
    (
        v6([0, 0, 0, 0, 0, 0xffff, 0, 0]),
        96,
        "an IPv4-mapped address (::ffff:0:0/96)",
        V6Rule::Carries(low32),
    ),
    (
        v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0]),
        96,
        "a NAT64 address (64:ff9b::/96)",
        V6Rule::Carries(low32),
    ),
    (
        v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0]),
        48,
        "a local-use IPv4/IPv6 translation address (64:ff9b:1::/48)",
        V6Rule::Refused,
    ),
    (
        v6([0x100, 0, 0, 0, 0, 0, 0, 0]),
        64,
        "a discard-only address (100::/64)",
        V6Rule::Refused,
    ),
    (
        v6([0x100, 0, 0, 1, 0, 0, 0, 0]),
        64,
        "a dummy IPv6 prefix address (100:0:0:1::/64)",
        V6Rule::Refused,
    ),
    (
        v6([0x2001, 0, 0, 0, 0, 0, 0, 0]),
        23,
        "an IETF protocol assignment address (2001::/23)",
        V6Rule::Refused,
    ),
    (
        v6([0x2001, 0, 0, 0, 0, 0, 0, 0]),
        32,
        "a Teredo address (2001::/32)",
        V6Rule::RefusedCarrying(teredo_client),
    ),
    (
        v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0]),
        32,
        "a documentation address (2001:db8::/32)",
        V6Rule::Refused,
    ),
    (
        v6([0x2002, 0, 0, 0, 0, 0, 0, 0]),
        16,
        "a 6to4 address (2002::/16)",
        V6Rule::RefusedCarrying(six_to_four),
    ),
    (
        v6([0x2620, 0x4f, 0x8000, 0, 0, 0, 0, 0]),
        48,
        "an AS112 direct delegation address (2620:4f:8000::/48)",
        V6Rule::Refused,
    ),
    (
        v6([0x3fff, 0, 0, 0, 0, 0, 0, 0]),
        20,
        "a documentation address (3fff::/20)",
        V6Rule::Refused,
    ),
    (
        v6([0x5f00, 0, 0, 0, 0, 0, 0, 0]),
        16,
        "a segment routing (SRv6) SID address (5f00::/16)",
        V6Rule::Refused,
    ),
    (
        v6([0xfc00, 0, 0, 0, 0, 0, 0, 0]),
        7,
        "an IPv6 unique-local address (fc00::/7)",
        V6Rule::Refused,
    ),
    (
        v6([0xfe80, 0, 0, 0, 0, 0, 0, 0]),
        10,
        "an IPv6 link-local address (fe80::/10)",
        V6Rule::Refused,
    ),
    (
        v6([0xfec0, 0, 0, 0, 0, 0, 0, 0]),
        10,
        "an IPv6 site-local address (fec0::/10)",
        V6Rule::Refused,
    ),
    (
        v6([0xff00, 0, 0, 0, 0, 0, 0, 0]),
        8,
        "an IPv6 multicast address (ff00::/8)",
        V6Rule::Refused,
    ),
];

/// Why `ip` may not receive webhooks (the special-purpose range it is in),
/// or `None` for an ordinary global unicast address. Every range of the
/// IANA IPv4 and IPv6 special-purpose registries, multicast, broadcast and
/// IPv6 site-local is refused; IPv4-mapped and NAT64 addresses are judged
/// as the IPv4 address they carry, and 6to4, Teredo and IPv4-compatible
/// addresses are refused, naming a carried internal IPv4 address.
pub fn blocked_address(ip: IpAddr) -> Option<SpecialAddress> {
    match ip {
        IpAddr::V4(v4) => special_v4(v4).map(|class| SpecialAddress {
            class,
            embedded: None,
        }),
        IpAddr::V6(v6) => special_v6(v6),
    }
}

fn special_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let bits = ip.to_bits();
    V4.iter()
        .filter(|(prefix, len, _)| {
            in_prefix(u128::from(bits), u128::from(prefix.to_bits()), *len, 32)
        })
        .max_by_key(|(_, len, _)| *len)
        .map(|(_, _, class)| *class)
}

fn special_v6(ip: Ipv6Addr) -> Option<SpecialAddress> {
    let bits = ip.to_bits();
    let (_, _, class, rule) = V6
        .iter()
        .filter(|(prefix, len, _, _)| in_prefix(bits, prefix.to_bits(), *len, 128))
        .max_by_key(|(_, len, _, _)| *len)?;
    match *rule {
        V6Rule::Refused => Some(SpecialAddress {
            class,
            embedded: None,
        }),
        V6Rule::Carries(unwrap) => {
            let v4 = unwrap(ip);
            special_v4(v4).map(|inner| SpecialAddress {
                class,
                embedded: Some((v4, inner)),
            })
        }
        V6Rule::RefusedCarrying(unwrap) => {
            let v4 = unwrap(ip);
            Some(SpecialAddress {
                class,
                embedded: special_v4(v4).map(|inner| (v4, inner)),
            })
        }
    }
}

/// `true` when the top `len` of `width` bits of `addr` equal `prefix`'s.
fn in_prefix(addr: u128, prefix: u128, len: u8, width: u32) -> bool {
    let shift = width - u32::from(len);
    if shift >= 128 {
        return true;
    }
    (addr >> shift) == (prefix >> shift)
}

#[cfg(test)]
mod tests;
