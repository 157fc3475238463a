//! The real binary started with each mistake an operator makes: stderr names the thing, the
//! cause the system gave and the setting to change, never a password, and the exit fails.

use crate::harness::{db, server};
use std::net::TcpListener;
use std::process::Command;

/// Runs `agentcard ARGS…` with only `env` set (none of the caller's settings); returns whether
/// it succeeded and its standard error.
fn agentcard(args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_agentcard"))
        .args(args)
        .env_clear()
        .env("RUST_LOG", "warn")
        .envs(env.iter().copied())
        .output()
        .expect("run agentcard");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The test database's URL with `change` applied.
fn test_url_with(change: impl FnOnce(&mut url::Url)) -> String {
    let mut url = url::Url::parse(&server().database_url).expect("the test database's URL");
    change(&mut url);
    url.to_string()
}

/// A loopback port nothing listens on (bound by the kernel, then released).
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Each database mistake, through every command that connects: `serve`, `migrate`, `admin`.
fn assert_each_command_says(url: &str, says: &[&str]) {
    for args in [
        &["serve"][..],
        &["migrate"],
        &["admin", "org", "create", "--name", "Never made"],
    ] {
        let (ok, stderr) = agentcard(
            args,
            &[("DATABASE_URL", url), ("AGENTCARD_LISTEN", "127.0.0.1:0")],
        );
        assert!(!ok, "{args:?} succeeded: {stderr}");
        for said in says {
            assert!(
                stderr.contains(said),
                "{args:?}: {said:?} missing from:\n{stderr}"
            );
        }
        assert!(!stderr.contains("secret"), "the password shown:\n{stderr}");
    }
}

#[test]
fn a_port_where_no_postgresql_listens_is_named_with_the_refusal() {
    let port = closed_port();
    let url = format!("postgres://postgres:secret@127.0.0.1:{port}/agentcard");
    assert_each_command_says(
        &url,
        &[
            &format!(
                "agentcard: database: cannot connect to \
                 postgres://postgres:***@127.0.0.1:{port}/agentcard (DATABASE_URL): \
                 error connecting to server: Connection refused (os error 111)"
            ),
            &format!("  fix: start PostgreSQL on 127.0.0.1:{port} (or let it listen there), or set DATABASE_URL to a server that answers"),
        ],
    );
}

#[test]
fn a_missing_database_is_named_with_postgresqls_message_and_code() {
    let url = test_url_with(|url| url.set_path("agentcard_no_such_database"));
    assert_each_command_says(
        &url,
        &[
            "(DATABASE_URL): database \"agentcard_no_such_database\" does not exist (SQLSTATE 3D000)",
            "  fix: create that database (createdb NAME), or set DATABASE_URL to a database that exists",
        ],
    );
}

#[test]
fn an_unknown_user_is_named_with_postgresqls_message_and_code() {
    let url = test_url_with(|url| {
        url.set_username("agentcard_no_such_role").unwrap();
        url.set_password(Some("secret")).unwrap();
    });
    assert_each_command_says(
        &url,
        &[
            "agentcard_no_such_role:***@",
            "(DATABASE_URL): role \"agentcard_no_such_role\" does not exist (SQLSTATE 28000)",
            "  fix: set the user (and password) in DATABASE_URL to a role this server lets in",
        ],
    );
}

#[test]
fn a_url_that_does_not_read_says_which_part_and_the_form() {
    assert_each_command_says(
        "postgres://postgres:secret@127.0.0.1:99999/agentcard",
        &[
            "agentcard: DATABASE_URL (postgres://postgres:***@127.0.0.1:99999/agentcard) is not a \
             PostgreSQL connection string: invalid connection string: invalid value for option `port`",
            "  fix: write it as postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE",
        ],
    );
}

#[test]
fn a_port_in_use_is_named_before_the_database_is_touched() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    // A database that does not answer: the listen address is refused first all the same.
    let url = format!("postgres://postgres@127.0.0.1:{}/agentcard", closed_port());
    for (setting, env) in [
        (
            "AGENTCARD_LISTEN",
            vec![("AGENTCARD_LISTEN", addr.to_string())],
        ),
        (
            "AGENTCARD_METRICS_LISTEN",
            vec![
                ("AGENTCARD_LISTEN", "127.0.0.1:0".to_string()),
                ("AGENTCARD_METRICS_LISTEN", addr.to_string()),
            ],
        ),
    ] {
        let mut env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        env.push(("DATABASE_URL", &url));
        let (ok, stderr) = agentcard(&["serve"], &env);
        assert!(!ok, "{stderr}");
        let said = format!(
            "agentcard: cannot listen on {addr} ({setting}): Address already in use (os error 98)\n  \
             fix: another process listens on {addr}: stop it, or set {setting} to a free address"
        );
        assert!(stderr.contains(&said), "{said:?} missing from:\n{stderr}");
        assert!(!stderr.contains("database"), "{stderr}");
    }
}

#[test]
fn links_without_a_console_host_are_a_configuration_error_naming_it() {
    let url = server().database_url.clone();
    let email = "no-console-host@example.test";
    let org = crate::harness::tenant().org_id;
    for args in [
        &["admin", "user", "create", "--email", email, "--support"][..],
        &["admin", "member", "invite", "--org", &org, "--email", email],
    ] {
        let (ok, stderr) = agentcard(args, &[("DATABASE_URL", &url), ("RUST_LOG", "info")]);
        assert!(!ok, "{args:?}: {stderr}");
        assert!(
            stderr.contains(
                "agentcard: AGENTCARD_CONSOLE_HOST: not set: the link this prints points to the \
                 console; set AGENTCARD_CONSOLE_HOST to the console's host name (and \
                 AGENTCARD_CONSOLE_URL too unless the console is at https://HOST)"
            ),
            "{args:?}: {stderr}"
        );
        assert!(
            !stderr.contains("internal") && !stderr.contains("ERROR"),
            "{stderr}"
        );
    }
    let made = db()
        .query("SELECT 1 FROM persons WHERE email = $1", &[&email])
        .unwrap();
    assert!(made.is_empty(), "a person was made without a link to show");
}

/// A folder for one run of scripts/run.sh: a `cargo` first on its PATH that says it was
/// called and exits with `cargo_status` (run.sh builds nothing here), and a target folder whose
/// release binary is the test's.
struct RunSh {
    dir: std::path::PathBuf,
}

impl RunSh {
    fn new(name: &str, cargo_status: u8) -> RunSh {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("agentcard-{name}-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::fs::create_dir_all(dir.join("target/release")).unwrap();
        let cargo = dir.join("bin/cargo");
        let script = format!("#!/bin/sh\necho 'cargo was called' >&2\nexit {cargo_status}\n");
        std::fs::write(&cargo, script).unwrap();
        std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
        let binary = dir.join("target/release/agentcard");
        let _ = std::fs::remove_file(&binary);
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_agentcard"), binary).unwrap();
        RunSh { dir }
    }

    /// Runs scripts/run.sh with `env`; returns its output.
    fn run(&self, env: &[(&str, &str)]) -> std::process::Output {
        let path = format!(
            "{}:{}",
            self.dir.join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Command::new("bash")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/run.sh"))
            .env("PATH", path)
            .env("CARGO_TARGET_DIR", self.dir.join("target"))
            .env_remove("AGENTCARD_CONSOLE_HOST")
            .envs(env.iter().copied())
            .output()
            .expect("run scripts/run.sh")
    }
}

impl Drop for RunSh {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn run_sh_stops_on_a_database_url_that_cannot_be_used() {
    let port = closed_port();
    let url = format!("postgres://postgres:secret@127.0.0.1:{port}/agentcard");
    // cargo fails if called: run.sh must stop before it builds anything.
    let output = RunSh::new("run-sh-url", 97).run(&[("DATABASE_URL", &url)]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        output.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let said = format!(
        "agentcard: error: DATABASE_URL (postgres://postgres:***@127.0.0.1:{port}/agentcard) \
         cannot be used: "
    );
    assert!(stderr.contains(&said), "{said:?} missing from:\n{stderr}");
    assert!(stderr.contains("Start that server, create that database or correct DATABASE_URL"));
    assert!(
        !stderr.contains("cargo was called") && !stderr.contains("secret"),
        "{stderr}"
    );
}

#[test]
fn run_sh_prints_nothing_when_the_service_does_not_start() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let url = server().database_url.clone();
    let output = RunSh::new("run-sh-listen", 0).run(&[
        ("DATABASE_URL", &url),
        ("AGENTCARD_LISTEN", &addr),
        ("RUST_LOG", "warn"),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        output.stdout.is_empty(),
        "the block (a sign-in link among it) was printed: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    for said in [
        format!("agentcard: cannot listen on {addr} (AGENTCARD_LISTEN): Address already in use"),
        format!(
            "agentcard: error: agentcard serve stopped (status 1) before answering on {addr}; \
             its error is above"
        ),
    ] {
        assert!(stderr.contains(&said), "{said:?} missing from:\n{stderr}");
    }
}
