//! The time the scheduled work sees (`crate::schedule`: alerts, scheduled reports): the
//! system's, or, for tests only, the time written in a file (`AGENTCARD_TEST_CLOCK_FILE`, an
//! RFC 3339 instant), so that a test moves a whole fleet's time by writing one file instead of
//! waiting. Requests and the report's counters always use the system's time.

use jiff::Timestamp;
use std::path::PathBuf;

#[derive(Debug, Clone, Default)]
pub struct Clock {
    /// Where a test writes the time; `None`: the system's time.
    file: Option<PathBuf>,
}

impl Clock {
    /// The clock a test moves by writing an instant into `file`.
    pub fn from_file(file: PathBuf) -> Clock {
        Clock { file: Some(file) }
    }

    /// The file's instant while it holds one; the system's time otherwise (before the test
    /// writes it, or while it is being written).
    pub fn now(&self) -> Timestamp {
        self.file
            .as_ref()
            .and_then(|file| std::fs::read_to_string(file).ok())
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or_else(Timestamp::now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_moves_the_time_and_the_system_time_stands_in_without_it() {
        let file = std::env::temp_dir().join(format!("agentcard-clock-{}", std::process::id()));
        let clock = Clock::from_file(file.clone());
        let before = Timestamp::now();
        assert!(clock.now() >= before, "no file: the system's time");
        std::fs::write(&file, "2030-01-07T09:00:00Z\n").unwrap();
        assert_eq!(
            clock.now(),
            "2030-01-07T09:00:00Z".parse::<Timestamp>().unwrap()
        );
        std::fs::remove_file(&file).unwrap();
        assert!(Clock::default().now() >= before);
    }
}
