//! Which addresses the icon's fetch may connect to: public ones only. A site's name may resolve
//! to anything (its owner chooses), so every address is checked against the special-purpose
//! blocks of IANA's registries, and the IPv6 forms that carry an IPv4 address are checked as
//! that address.

use ipnet::IpNet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Blocks an address must not be in, each with why, most specific first (so that a metadata
/// address is named as such, not as the link-local block around it).
const BLOCKS: &[(IpNet, &str)] = &[
    (v4(169, 254, 169, 254, 32), "cloud metadata"),
    (v4(100, 100, 100, 200, 32), "cloud metadata"),
    (
        v6(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254, 128),
        "cloud metadata",
    ),
    (v4(255, 255, 255, 255, 32), "broadcast"),
    (v4(0, 0, 0, 0, 8), "unspecified (this network)"),
    (v4(10, 0, 0, 0, 8), "private"),
    (v4(100, 64, 0, 0, 10), "shared address space (CGNAT)"),
    (v4(127, 0, 0, 0, 8), "loopback"),
    (v4(169, 254, 0, 0, 16), "link-local"),
    (v4(172, 16, 0, 0, 12), "private"),
    (v4(192, 0, 0, 0, 24), "IETF protocol assignments"),
    (v4(192, 0, 2, 0, 24), "documentation"),
    (v4(192, 88, 99, 0, 24), "6to4 relay anycast"),
    (v4(192, 168, 0, 0, 16), "private"),
    (v4(198, 18, 0, 0, 15), "benchmarking"),
    (v4(198, 51, 100, 0, 24), "documentation"),
    (v4(203, 0, 113, 0, 24), "documentation"),
    (v4(224, 0, 0, 0, 4), "multicast"),
    (v4(240, 0, 0, 0, 4), "reserved"),
    (v6(0, 0, 0, 0, 0, 0, 0, 0, 128), "unspecified"),
    (v6(0, 0, 0, 0, 0, 0, 0, 1, 128), "loopback"),
    (v6(0x64, 0xff9b, 1, 0, 0, 0, 0, 0, 48), "local-use NAT64"),
    (v6(0x100, 0, 0, 0, 0, 0, 0, 0, 64), "discard-only"),
    (v6(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0, 32), "documentation"),
    (v6(0x2001, 0, 0, 0, 0, 0, 0, 0, 32), "Teredo"),
    (
        v6(0x2001, 0, 0, 0, 0, 0, 0, 0, 23),
        "IETF protocol assignments",
    ),
    (v6(0x2002, 0, 0, 0, 0, 0, 0, 0, 16), "6to4"),
    (v6(0x3fff, 0, 0, 0, 0, 0, 0, 0, 20), "documentation"),
    (v6(0x5f00, 0, 0, 0, 0, 0, 0, 0, 16), "segment routing"),
    (v6(0xfc00, 0, 0, 0, 0, 0, 0, 0, 7), "private (unique local)"),
    (v6(0xfe80, 0, 0, 0, 0, 0, 0, 0, 10), "link-local"),
    (v6(0xfec0, 0, 0, 0, 0, 0, 0, 0, 10), "site-local"),
    (v6(0xff00, 0, 0, 0, 0, 0, 0, 0, 8), "multicast"),
];

/// IPv6 blocks whose last 32 bits are an IPv4 address, checked as that address: mapped
/// (`::ffff:a.b.c.d`), NAT64's well-known prefix, and the deprecated compatible form (`::a.b.c.d`,
/// after `::` and `::1` above).
const CARRY_IPV4: &[IpNet] = &[
    v6(0, 0, 0, 0, 0, 0xffff, 0, 0, 96),
    v6(0x64, 0xff9b, 0, 0, 0, 0, 0, 0, 96),
    v6(0, 0, 0, 0, 0, 0, 0, 0, 96),
];

/// IPv6 global unicast, where every public IPv6 address is allocated today.
const GLOBAL_UNICAST: IpNet = v6(0x2000, 0, 0, 0, 0, 0, 0, 0, 3);

/// Why the icon's fetch may not connect to `ip`, or `None` when it may.
pub fn refusal(ip: IpAddr) -> Option<&'static str> {
    if let Some((_, why)) = BLOCKS.iter().find(|(block, _)| block.contains(&ip)) {
        return Some(why);
    }
    let IpAddr::V6(v6) = ip else {
        return None;
    };
    if CARRY_IPV4.iter().any(|block| block.contains(&ip)) {
        let [.., a, b, c, d] = v6.octets();
        return refusal(IpAddr::V4(Ipv4Addr::new(a, b, c, d)));
    }
    (!GLOBAL_UNICAST.contains(&ip)).then_some("reserved")
}

const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u8) -> IpNet {
    IpNet::new_assert(IpAddr::V4(Ipv4Addr::new(a, b, c, d)), prefix)
}

#[allow(clippy::too_many_arguments)]
const fn v6(a: u16, b: u16, c: u16, d: u16, e: u16, f: u16, g: u16, h: u16, prefix: u8) -> IpNet {
    IpNet::new_assert(IpAddr::V6(Ipv6Addr::new(a, b, c, d, e, f, g, h)), prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each address and why it is refused (`None`: public).
    const TABLE: &[(&str, Option<&str>)] = &[
        ("93.184.215.14", None),
        ("1.1.1.1", None),
        ("8.8.8.8", None),
        ("172.15.255.255", None),
        ("172.32.0.0", None),
        ("100.63.255.255", None),
        ("100.128.0.0", None),
        ("198.20.0.0", None),
        ("2606:2800:21f:cb07:6820:80da:af6b:8b2c", None),
        ("2a00:1450:4007:80e::200e", None),
        ("::ffff:93.184.215.14", None),
        ("64:ff9b::808:808", None),
        ("127.0.0.1", Some("loopback")),
        ("127.255.255.254", Some("loopback")),
        ("::1", Some("loopback")),
        ("10.0.0.1", Some("private")),
        ("10.255.255.255", Some("private")),
        ("172.16.0.1", Some("private")),
        ("172.31.255.255", Some("private")),
        ("192.168.1.1", Some("private")),
        ("fc00::1", Some("private (unique local)")),
        ("fd12:3456:789a::1", Some("private (unique local)")),
        ("169.254.0.1", Some("link-local")),
        ("fe80::1", Some("link-local")),
        ("febf::1", Some("link-local")),
        ("100.64.0.1", Some("shared address space (CGNAT)")),
        ("100.127.255.255", Some("shared address space (CGNAT)")),
        ("224.0.0.1", Some("multicast")),
        ("239.255.255.250", Some("multicast")),
        ("ff02::1", Some("multicast")),
        ("0.0.0.0", Some("unspecified (this network)")),
        ("0.1.2.3", Some("unspecified (this network)")),
        ("::", Some("unspecified")),
        ("255.255.255.255", Some("broadcast")),
        ("192.0.2.1", Some("documentation")),
        ("198.51.100.7", Some("documentation")),
        ("203.0.113.200", Some("documentation")),
        ("2001:db8::1", Some("documentation")),
        ("3fff::1", Some("documentation")),
        ("198.18.0.1", Some("benchmarking")),
        ("198.19.255.255", Some("benchmarking")),
        ("240.0.0.1", Some("reserved")),
        ("192.0.0.8", Some("IETF protocol assignments")),
        ("169.254.169.254", Some("cloud metadata")),
        ("fd00:ec2::254", Some("cloud metadata")),
        ("100.100.100.200", Some("cloud metadata")),
        ("::ffff:127.0.0.1", Some("loopback")),
        ("::ffff:10.1.2.3", Some("private")),
        ("::ffff:169.254.169.254", Some("cloud metadata")),
        ("::ffff:100.64.0.1", Some("shared address space (CGNAT)")),
        ("::127.0.0.1", Some("loopback")),
        ("::192.168.0.1", Some("private")),
        ("64:ff9b::a00:1", Some("private")),
        ("64:ff9b::7f00:1", Some("loopback")),
        ("64:ff9b:1::1", Some("local-use NAT64")),
        ("2002:7f00:1::1", Some("6to4")),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", Some("Teredo")),
        ("2001:2::1", Some("IETF protocol assignments")),
        ("100::1", Some("discard-only")),
        ("5f00::1", Some("segment routing")),
        ("fec0::1", Some("site-local")),
        ("4000::1", Some("reserved")),
        ("::2", Some("unspecified (this network)")),
    ];

    #[test]
    fn every_address_of_the_table_is_judged_as_it_says() {
        for (address, expected) in TABLE {
            let ip: IpAddr = address.parse().unwrap();
            assert_eq!(refusal(ip), *expected, "{address}");
        }
    }
}
