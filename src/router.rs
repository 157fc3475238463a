//! Where a request goes, by host and path: the area (`/v1`, `/fragment`, the console, the other
//! routes) that answers it. Under `/v1`, the route table of `api` decides the operation, `404`
//! and `405`.

/// The role of the `Host` a request was sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostRole {
    Base,
    Console,
    Legacy,
    /// A configured base host exists and this is none of the three.
    Other,
}

/// Which part of the service answers a path, before looking at the method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    Management,
    Fragment,
    Health,
    Ready,
    Contact,
    /// Every other path of the console host: the console's pages.
    Console,
    NotFound,
    /// `/v1` on a host that does not serve it: `404` in the management envelope.
    ManagementNotFound,
}

impl Area {
    /// The area the operator metrics count this one under: `/v1` on a host that does not
    /// serve it counts under `management`, whose `404` it answers.
    pub fn counted(self) -> CountedArea {
        match self {
            Area::Management | Area::ManagementNotFound => CountedArea::Management,
            Area::Fragment => CountedArea::Fragment,
            Area::Health => CountedArea::Health,
            Area::Ready => CountedArea::Ready,
            Area::Contact => CountedArea::Contact,
            Area::NotFound => CountedArea::NotFound,
            Area::Console => CountedArea::Console,
        }
    }
}

/// The areas as the operator metrics count requests (their `area` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountedArea {
    Management,
    Fragment,
    Health,
    Ready,
    Contact,
    NotFound,
    Console,
}

impl CountedArea {
    /// Every counted area, each at its [`CountedArea::index`].
    pub const ALL: [CountedArea; 7] = [
        CountedArea::Management,
        CountedArea::Fragment,
        CountedArea::Health,
        CountedArea::Ready,
        CountedArea::Contact,
        CountedArea::NotFound,
        CountedArea::Console,
    ];

    /// This area's place in [`CountedArea::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The `area` label.
    pub fn as_str(self) -> &'static str {
        match self {
            CountedArea::Management => "management",
            CountedArea::Fragment => "fragment",
            CountedArea::Health => "health",
            CountedArea::Ready => "ready",
            CountedArea::Contact => "contact",
            CountedArea::NotFound => "not_found",
            CountedArea::Console => "console",
        }
    }
}

/// Host and path → area, as decisions.md "Names and process" fixes it: the console host
/// answers `404` on `/v1` and `/fragment` and serves the console's pages on its other paths;
/// the legacy host serves `/fragment` and `/health` only.
pub fn area(host: HostRole, path: &str) -> Area {
    let management = path == "/v1" || path.starts_with("/v1/");
    match (host, path) {
        (_, "/health") => Area::Health,
        (HostRole::Base, _) if management => Area::Management,
        (HostRole::Console | HostRole::Legacy | HostRole::Other, _) if management => {
            Area::ManagementNotFound
        }
        (HostRole::Base | HostRole::Legacy, "/fragment") => Area::Fragment,
        (HostRole::Base | HostRole::Console, "/ready") => Area::Ready,
        (HostRole::Base | HostRole::Console, "/contact") => Area::Contact,
        (HostRole::Console, "/fragment") => Area::NotFound,
        (HostRole::Console, _) => Area::Console,
        _ => Area::NotFound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn areas_are_counted_under_their_names() {
        let areas = [
            Area::Management,
            Area::ManagementNotFound,
            Area::Fragment,
            Area::Health,
            Area::Ready,
            Area::Contact,
            Area::NotFound,
            Area::Console,
        ];
        let names = areas.map(|area| area.counted().as_str());
        let expected = "management management fragment health ready contact not_found console";
        assert_eq!(
            names.join(" "),
            expected,
            "/v1 on another host counts as management"
        );
    }

    #[test]
    fn each_counted_area_is_at_its_index() {
        for (i, area) in CountedArea::ALL.into_iter().enumerate() {
            assert_eq!(area.index(), i, "{area:?}");
        }
    }

    #[test]
    fn hosts_reach_their_areas() {
        let cases = [
            (HostRole::Base, "/v1/me", Area::Management),
            (HostRole::Console, "/v1/me", Area::ManagementNotFound),
            (HostRole::Legacy, "/v1/me", Area::ManagementNotFound),
            (HostRole::Base, "/fragment", Area::Fragment),
            (HostRole::Legacy, "/fragment", Area::Fragment),
            (HostRole::Console, "/fragment", Area::NotFound),
            (HostRole::Legacy, "/health", Area::Health),
            (HostRole::Legacy, "/ready", Area::NotFound),
            (HostRole::Console, "/contact", Area::Contact),
            (HostRole::Console, "/", Area::Console),
            (HostRole::Console, "/members", Area::Console),
            (HostRole::Console, "/health", Area::Health),
            (HostRole::Base, "/members", Area::NotFound),
            (HostRole::Legacy, "/sign-in", Area::NotFound),
            (HostRole::Other, "/sign-in", Area::NotFound),
            (HostRole::Base, "/v1x", Area::NotFound),
        ];
        for (host, path, expected) in cases {
            assert_eq!(area(host, path), expected, "{host:?} {path}");
        }
    }
}
