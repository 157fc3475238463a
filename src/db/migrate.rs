//! Applies the numbered files of `sql/` in order, once each, recorded in
//! `schema_migrations`. An advisory lock keeps two starting instances from racing.

use postgres::Client;

/// Every migration, in order. A unit test checks this list against the files of `sql/`.
const MIGRATIONS: &[(i32, &str, &str)] = &[
    (
        1,
        "001_schema.sql",
        include_str!("../../sql/001_schema.sql"),
    ),
    (
        2,
        "002_cache_versions.sql",
        include_str!("../../sql/002_cache_versions.sql"),
    ),
    (
        3,
        "003_report_indexes.sql",
        include_str!("../../sql/003_report_indexes.sql"),
    ),
    (
        4,
        "004_report_brin_summaries.sql",
        include_str!("../../sql/004_report_brin_summaries.sql"),
    ),
    (
        5,
        "005_report_aggregates.sql",
        include_str!("../../sql/005_report_aggregates.sql"),
    ),
    (
        6,
        "006_audit_log.sql",
        include_str!("../../sql/006_audit_log.sql"),
    ),
    (
        7,
        "007_people.sql",
        include_str!("../../sql/007_people.sql"),
    ),
    (
        8,
        "008_site_icons.sql",
        include_str!("../../sql/008_site_icons.sql"),
    ),
    (
        9,
        "009_console_safety.sql",
        include_str!("../../sql/009_console_safety.sql"),
    ),
    (
        10,
        "010_report_card_pages.sql",
        include_str!("../../sql/010_report_card_pages.sql"),
    ),
    (
        11,
        "011_report_days.sql",
        include_str!("../../sql/011_report_days.sql"),
    ),
    (
        12,
        "012_viewer_role.sql",
        include_str!("../../sql/012_viewer_role.sql"),
    ),
    (
        13,
        "013_audit_names.sql",
        include_str!("../../sql/013_audit_names.sql"),
    ),
    (
        14,
        "014_second_factors.sql",
        include_str!("../../sql/014_second_factors.sql"),
    ),
    (
        15,
        "015_sign_in_proofs.sql",
        include_str!("../../sql/015_sign_in_proofs.sql"),
    ),
    (
        17,
        "017_report_samples.sql",
        include_str!("../../sql/017_report_samples.sql"),
    ),
    (
        18,
        "018_page_reasons_time_zones.sql",
        include_str!("../../sql/018_page_reasons_time_zones.sql"),
    ),
    (
        21,
        "021_alerts.sql",
        include_str!("../../sql/021_alerts.sql"),
    ),
    (
        22,
        "022_report_subscriptions.sql",
        include_str!("../../sql/022_report_subscriptions.sql"),
    ),
];

/// Arbitrary constant naming our advisory lock.
const LOCK_KEY: i64 = 0x6167_656e_7463_6172;

/// Applies what is missing; returns the names of the migrations applied now.
pub fn run(client: &mut Client) -> Result<Vec<&'static str>, postgres::Error> {
    run_to(client, i32::MAX)
}

/// Applies what is missing up to migration `last` (a test stops before a migration to give it
/// data of the schema it changes).
pub fn run_to(client: &mut Client, last: i32) -> Result<Vec<&'static str>, postgres::Error> {
    client.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version integer PRIMARY KEY,
             name text NOT NULL,
             applied_at timestamptz NOT NULL DEFAULT now())",
    )?;
    client.execute("SELECT pg_advisory_lock($1)", &[&LOCK_KEY])?;
    let applied = apply_missing(client, last);
    client.execute("SELECT pg_advisory_unlock($1)", &[&LOCK_KEY])?;
    applied
}

fn apply_missing(client: &mut Client, last: i32) -> Result<Vec<&'static str>, postgres::Error> {
    let mut applied = Vec::new();
    for &(version, name, sql) in MIGRATIONS.iter().filter(|m| m.0 <= last) {
        let done = client
            .query_opt(
                "SELECT 1 FROM schema_migrations WHERE version = $1",
                &[&version],
            )?
            .is_some();
        if done {
            continue;
        }
        let mut tx = client.transaction()?;
        tx.batch_execute(sql)?;
        tx.execute(
            "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
            &[&version, &name],
        )?;
        tx.commit()?;
        applied.push(name);
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::MIGRATIONS;

    #[test]
    fn every_sql_file_is_listed_in_order() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/sql");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".sql"))
            .collect();
        files.sort();
        let listed: Vec<&str> = MIGRATIONS.iter().map(|m| m.1).collect();
        assert_eq!(files, listed);
        // Numbers rise and name their file; a number may be taken by a branch not merged yet.
        for pair in MIGRATIONS.windows(2) {
            assert!(pair[0].0 < pair[1].0, "{} before {}", pair[0].1, pair[1].1);
        }
        for migration in MIGRATIONS {
            assert!(migration.1.starts_with(&format!("{:03}_", migration.0)));
        }
    }
}
