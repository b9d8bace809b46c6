#![allow(clippy::unwrap_used)]
use super::*;

fn class_of(ip: IpAddr) -> Option<&'static str> {
    blocked_address(ip).map(|s| s.class)
}

/// A row of `bits`-bit addresses from `first`, `len` bits of prefix: its
/// last address is in it; the addresses just before its first and just
/// after its last are not (they may be in another row).
fn assert_row_holds_its_range(
    first: u128,
    len: u8,
    bits: u32,
    class: &str,
    ip: impl Fn(u128) -> IpAddr,
) {
    let last = first
        | (u128::MAX >> (128 - bits))
            .checked_shr(u32::from(len))
            .unwrap_or(0);
    let row = format!("{}/{len}", ip(first));
    // Its last or first address is in it (the other may be in a more
    // specific row, like 255.255.255.255 in 240.0.0.0/4); both are refused.
    let inside = [last, first].map(|a| class_of(ip(a)));
    assert!(inside.iter().all(Option::is_some), "{row}: {inside:?}");
    assert!(inside.contains(&Some(class)), "{row}: {inside:?}");
    let max = u128::MAX >> (128 - bits);
    for outside in [
        first.checked_sub(1),
        last.checked_add(1).filter(|a| *a <= max),
    ]
    .into_iter()
    .flatten()
    {
        assert_ne!(class_of(ip(outside)), Some(class), "{row}: {}", ip(outside));
    }
}

/// Every IPv4 row holds its range and nothing next to it.
#[test]
fn every_v4_row_holds_its_range_and_nothing_next_to_it() {
    for &(prefix, len, class) in V4 {
        let to_ip = |a: u128| IpAddr::from(Ipv4Addr::from(u32::try_from(a).unwrap()));
        assert_row_holds_its_range(u128::from(prefix.to_bits()), len, 32, class, to_ip);
    }
}

/// The same for every IPv6 row.
#[test]
fn every_v6_row_holds_its_range_and_nothing_next_to_it() {
    for &(prefix, len, class, _) in V6 {
        let to_ip = |a: u128| IpAddr::from(Ipv6Addr::from(a));
        assert_row_holds_its_range(prefix.to_bits(), len, 128, class, to_ip);
    }
}

#[test]
fn the_issues_addresses_are_refused() {
    for ip in [
        "198.18.0.1",
        "198.19.255.255",
        "240.0.0.1",
        "192.0.0.8",
        "192.0.2.2",
        "198.51.100.7",
        "203.0.113.9",
        "2001:db8::1",
        "3fff::1",
        "2002:7f00:1::",
        "2001:0:4136:e378:8000:63bf:80ff:fffe",
    ] {
        assert!(blocked_address(ip.parse().unwrap()).is_some(), "{ip}");
    }
}

#[test]
fn ordinary_public_addresses_pass() {
    for ip in [
        "8.8.8.8",
        "1.1.1.1",
        "93.184.215.14",
        "2606:4700::1111",
        "2a00:1450:4001:82b::200e",
        "::ffff:93.184.215.14",
        "64:ff9b::5db8:d70e",
    ] {
        assert_eq!(blocked_address(ip.parse().unwrap()), None, "{ip}");
    }
}

/// IPv4 carried in IPv6 is unwrapped: mapped and NAT64 addresses are the
/// address they carry; 6to4, Teredo and IPv4-compatible are refused and
/// name a carried internal address.
#[test]
fn embedded_ipv4_is_unwrapped() {
    let s = blocked_address("::ffff:127.0.0.1".parse().unwrap()).unwrap();
    assert_eq!(
        s.embedded,
        Some((Ipv4Addr::LOCALHOST, "a loopback address (127.0.0.0/8)"))
    );
    assert!(
        s.to_string().contains("carrying 127.0.0.1, a loopback"),
        "{s}"
    );

    let s = blocked_address("64:ff9b::a00:1".parse().unwrap()).unwrap();
    assert_eq!(s.embedded.unwrap().0, Ipv4Addr::new(10, 0, 0, 1));

    let s = blocked_address("2002:7f00:1::".parse().unwrap()).unwrap();
    assert_eq!(s.class, "a 6to4 address (2002::/16)");
    assert_eq!(s.embedded.unwrap().0, Ipv4Addr::LOCALHOST);
    let s = blocked_address("2002:5db8:d70e::1".parse().unwrap()).unwrap();
    assert_eq!(s.class, "a 6to4 address (2002::/16)");
    assert_eq!(s.embedded, None, "a public carried address is not named");

    // Teredo's client address is inverted: !0x80ff_fffe = 127.0.0.1.
    let s = blocked_address("2001:0:4136:e378:8000:63bf:80ff:fffe".parse().unwrap()).unwrap();
    assert_eq!(s.class, "a Teredo address (2001::/32)");
    assert_eq!(s.embedded.unwrap().0, Ipv4Addr::LOCALHOST);
    // Elsewhere in 2001::/23 it is a protocol assignment, nothing carried.
    let s = blocked_address("2001:2::1".parse().unwrap()).unwrap();
    assert_eq!(s.class, "an IETF protocol assignment address (2001::/23)");

    let s = blocked_address("::10.0.0.1".parse().unwrap()).unwrap();
    assert_eq!(s.class, "a deprecated IPv4-compatible address (::/96)");
    assert_eq!(s.embedded.unwrap().0, Ipv4Addr::new(10, 0, 0, 1));
}
