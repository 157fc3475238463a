//! Who the client is: the socket peer, or, behind trusted proxies, the address they forward.

use super::Request;
use ipnet::IpNet;
use std::net::{IpAddr, SocketAddr};

/// Where the client address comes from (`AGENTCARD_CLIENT_IP_HEADER`,
/// `AGENTCARD_TRUSTED_PROXIES`).
#[derive(Debug, Clone, Default)]
pub struct ClientAddress {
    /// The forwarding header's name, lowercase; `None`: the socket peer is the client.
    pub header: Option<String>,
    pub trusted_proxies: Vec<IpNet>,
}

impl ClientAddress {
    /// The socket peer, or, when the peer is a trusted proxy and a header is configured, the
    /// right-most address of that header that is not a trusted proxy itself.
    pub fn of(&self, request: &Request) -> IpAddr {
        let peer = request.peer.ip();
        let Some(header) = &self.header else {
            return peer;
        };
        if !self.is_trusted_proxy(peer) {
            return peer;
        }
        let addresses: Vec<IpAddr> = request
            .header_all(header)
            .flat_map(|v| v.split(','))
            .filter_map(parse_ip)
            .collect();
        addresses
            .iter()
            .rev()
            .find(|ip| !self.is_trusted_proxy(**ip))
            .or(addresses.first())
            .copied()
            .unwrap_or(peer)
    }

    /// Is the socket peer allowed to tell us the client address through a header?
    pub fn is_trusted_proxy(&self, ip: IpAddr) -> bool {
        self.trusted_proxies.iter().any(|net| net.contains(&ip))
    }
}

/// An address as sent in forwarding headers: bare, bracketed IPv6, or with a port.
fn parse_ip(text: &str) -> Option<IpAddr> {
    let text = text.trim();
    text.parse::<IpAddr>()
        .ok()
        .or_else(|| text.parse::<SocketAddr>().ok().map(|s| s.ip()))
        .or_else(|| {
            text.trim_start_matches('[')
                .trim_end_matches(']')
                .parse()
                .ok()
        })
}
