//! A throwaway PostgreSQL server for tests (crate feature `testing`).
//!
//! Tests that need a real PostgreSQL start one from the machine's own server
//! binaries: no Docker, no downloaded binaries. [`TestPostgres::start`]
//!
//! 1. finds the binaries (`$SWITCHBOARD_PG_BINDIR`, then `pg_config --bindir`,
//!    then `/usr/lib/postgresql/*/bin`, newest first, then `$PATH`);
//! 2. makes a private temporary directory and runs `initdb` in it (trust
//!    authentication, superuser `switchboard`, `--no-sync`);
//! 3. starts the server with `pg_ctl -w` on `127.0.0.1` and a free port, with
//!    its unix socket inside the directory and `fsync = off`, and returns
//!    once it accepts connections;
//! 4. stops it (`pg_ctl -m immediate stop`) and deletes the directory when
//!    dropped.
//!
//! PostgreSQL refuses to run as root. When the tests run as root (CI
//! containers do), every server command runs through
//! `runuser -u postgres --` and the directory is handed to the `postgres`
//! user, which Debian's `postgresql` package creates.
//!
//! A small **guardian** process (`sh`, reading its standard input from a
//! pipe held by the test process) does the stopping and deleting. Dropping
//! the [`TestPostgres`] closes the pipe and waits for the guardian; if the
//! test process ends without dropping it (a `static`, a panic that aborts, a
//! `SIGKILL`), the pipe closes all the same and the guardian still cleans
//! up, so no server outlives its tests.
//!
//! Most tests want [`fresh_database_or_skip`]: one server per test binary
//! ([`TestPostgres::shared`]) and a new, empty database per test, so tests
//! stay independent and run in parallel. Starting the server takes about a
//! second, mostly `initdb`; a fresh database takes a few milliseconds.
//!
//! ```no_run
//! # async fn demo() {
//! use switchboard_store_postgres::{PgStore, testing};
//!
//! // Skips (returns None, with a note on stderr) when no server can be
//! // started, unless SWITCHBOARD_REQUIRE_POSTGRES is set: then it panics.
//! let Some(url) = testing::fresh_database_or_skip("my_test").await else { return };
//! let store = PgStore::open(&url).await.unwrap();
//! # let _ = store; }
//! ```
//!
//! `install-postgres.sh`, next to this crate's `Cargo.toml`, installs
//! Debian's `postgresql` when no server binaries are found; CI runs it
//! before the tests and sets `SWITCHBOARD_REQUIRE_POSTGRES=1`, so a missing
//! server fails the build instead of silently skipping the tests.

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use sqlx::{AssertSqlSafe, Connection, PgConnection};

/// When set (to anything but empty or `0`), tests that cannot start
/// PostgreSQL fail instead of skipping.
pub const REQUIRE_ENV: &str = "SWITCHBOARD_REQUIRE_POSTGRES";

/// A directory holding `initdb`, `pg_ctl` and `postgres`, tried before
/// anything else.
pub const BINDIR_ENV: &str = "SWITCHBOARD_PG_BINDIR";

/// The superuser `initdb` creates; it logs in without a password.
pub const SUPERUSER: &str = "switchboard";

/// How often a start is retried when the free port chosen was taken in
/// the meantime.
const PORT_ATTEMPTS: usize = 5;

/// Settings appended to `postgresql.conf`: only local TCP, speed over
/// crash safety of the OS (`fsync = off`; a crash of the *server* still
/// loses nothing that was committed), and room for many test pools.
const SETTINGS: &str = "
# switchboard test server
listen_addresses = '127.0.0.1'
fsync = off
full_page_writes = off
max_connections = 300
";

/// Makes names unique within this process.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A private PostgreSQL server, stopped and deleted on drop. See the module docs.
#[derive(Debug)]
pub struct TestPostgres {
    /// The temporary directory: `data/`, `log`, the unix socket.
    root: PathBuf,
    data: PathBuf,
    bindir: PathBuf,
    port: u16,
    /// Run server commands as the `postgres` user (we are root).
    as_postgres: bool,
    /// Stops the server and deletes `root` once its stdin closes.
    guardian: Option<Child>,
}

impl TestPostgres {
    /// Initializes and starts a new server. Takes about a second. The error
    /// says what failed, with the server's log when it got that far.
    pub fn start() -> Result<Self, String> {
        let bindir = find_bindir()?;
        let as_postgres = running_as_root();
        let root = make_root(as_postgres)?;
        let data = root.join("data");
        let mut server = TestPostgres {
            data,
            bindir,
            port: 0,
            as_postgres,
            guardian: None,
            root,
        };
        // From here on, dropping `server` cleans up whatever exists.
        server.guardian = Some(server.spawn_guardian()?);
        server.init()?;
        server.start_on_free_port()?;
        Ok(server)
    }

    /// One server for the whole test process, started on first use.
    ///
    /// It is never dropped; its guardian stops it and deletes its directory
    /// when the process exits. Give each test its own database with
    /// [`fresh_database`](Self::fresh_database).
    pub fn shared() -> Result<&'static TestPostgres, String> {
        static SHARED: OnceLock<Result<TestPostgres, String>> = OnceLock::new();
        SHARED
            .get_or_init(TestPostgres::start)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The URL of the server's `postgres` database, as the superuser.
    pub fn url(&self) -> String {
        self.database_url("postgres")
    }

    /// The URL of database `name` on this server, as the superuser.
    pub fn database_url(&self, name: &str) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{name}", self.port)
    }

    /// The TCP port the server listens on (on 127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The temporary directory holding the cluster (`data/`), the server log
    /// (`log`) and the unix socket.
    pub fn dir(&self) -> &Path {
        &self.root
    }

    /// Creates a new, empty database with a unique name and returns its URL.
    pub async fn fresh_database(&self) -> Result<String, String> {
        let name = format!(
            "switchboard_test_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let mut conn = PgConnection::connect(&self.url())
            .await
            .map_err(|e| format!("connecting to the test server at {}: {e}", self.url()))?;
        let created = sqlx::query(AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
            .execute(&mut conn)
            .await
            .map_err(|e| format!("creating database {name}: {e}"));
        let _ = conn.close().await;
        created?;
        Ok(self.database_url(&name))
    }

    /// Creates a new, empty database whose tables live in `location`, a
    /// directory the server's user owns (a tablespace there, named after
    /// the database), and returns its URL. Put `location` on a small file
    /// system to fill the disk under the database's data alone: the
    /// server's own files (its write-ahead log among them) stay where they
    /// are.
    pub async fn database_in(&self, location: &Path) -> Result<String, String> {
        let name = format!(
            "switchboard_test_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let location = location
            .to_str()
            .ok_or_else(|| format!("{location:?} is not UTF-8"))?
            .replace('\'', "''");
        let mut conn = PgConnection::connect(&self.url())
            .await
            .map_err(|e| format!("connecting to the test server at {}: {e}", self.url()))?;
        let mut created = Ok(());
        for sql in [
            format!("CREATE TABLESPACE \"{name}\" LOCATION '{location}'"),
            format!("CREATE DATABASE \"{name}\" TABLESPACE \"{name}\""),
        ] {
            created = sqlx::query(AssertSqlSafe(sql.clone()))
                .execute(&mut conn)
                .await
                .map(|_| ())
                .map_err(|e| format!("{sql}: {e}"));
            if created.is_err() {
                break;
            }
        }
        let _ = conn.close().await;
        created?;
        Ok(self.database_url(&name))
    }

    /// Whether server commands run as the `postgres` user (this process is
    /// root): then files the server must write belong to that user.
    pub fn runs_as_postgres(&self) -> bool {
        self.as_postgres
    }

    /// Crashes the server (`pg_ctl -m immediate stop`: no shutdown
    /// checkpoint, like a power cut for the server process) and starts it
    /// again on the same port, which replays the write-ahead log. Open
    /// connections break; pools reconnect.
    pub fn restart(&self) -> Result<(), String> {
        self.run(
            self.pg_ctl()
                .args(["-m", "immediate", "-w", "-t", "30", "stop"]),
            "pg_ctl stop",
        )?;
        self.pg_ctl_start(self.port)
    }

    /// Stops the server (`pg_ctl -m fast stop`, waiting until it is down):
    /// open connections break and new ones are refused until
    /// [`restart`](Self::restart).
    pub fn stop(&self) -> Result<(), String> {
        self.run(
            self.pg_ctl().args(["-m", "fast", "-w", "-t", "30", "stop"]),
            "pg_ctl stop",
        )
    }

    /// The server's log so far (for failure messages).
    pub fn log(&self) -> String {
        read_tail(&self.root.join("log"), 64 * 1024)
    }

    // ------------------------------------------------------------------

    fn spawn_guardian(&self) -> Result<Child, String> {
        // `read` returns at EOF, when the test process drops its end of
        // the pipe (on drop or at exit). Terminal signals go to the test's
        // process group, not to this one.
        let script = r#"trap '' INT HUP TERM QUIT
read _line
"$1" -D "$2" -m immediate -w -t 30 stop >/dev/null 2>&1
rm -rf "$3""#;
        let mut cmd = self.command(Path::new("sh"));
        cmd.arg("-c")
            .arg(script)
            .arg("switchboard-pg-guardian")
            .arg(self.bindir.join("pg_ctl"))
            .arg(&self.data)
            .arg(&self.root)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        cmd.spawn()
            .map_err(|e| format!("starting the cleanup process: {e}"))
    }

    fn init(&self) -> Result<(), String> {
        let mut cmd = self.command(&self.bindir.join("initdb"));
        cmd.arg("-D")
            .arg(&self.data)
            .args(["-A", "trust", "-U", SUPERUSER, "--no-sync"])
            .args(["-E", "UTF8", "--no-locale"]);
        self.run(&mut cmd, "initdb")?;
        let conf = self.data.join("postgresql.conf");
        let socket_dir = self.root.display().to_string().replace('\'', "''");
        let settings = format!("{SETTINGS}unix_socket_directories = '{socket_dir}'\n");
        fs::OpenOptions::new()
            .append(true)
            .open(&conf)
            .and_then(|mut f| std::io::Write::write_all(&mut f, settings.as_bytes()))
            .map_err(|e| format!("writing {}: {e}", conf.display()))
    }

    fn start_on_free_port(&mut self) -> Result<(), String> {
        let mut last = String::new();
        for _ in 0..PORT_ATTEMPTS {
            let port = free_port()?;
            match self.pg_ctl_start(port) {
                Ok(()) => {
                    self.port = port;
                    return Ok(());
                }
                Err(e) if e.contains("could not bind") || e.contains("already in use") => {
                    last = e;
                }
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }

    fn pg_ctl_start(&self, port: u16) -> Result<(), String> {
        let log = self.root.join("log");
        let mut cmd = self.pg_ctl();
        cmd.arg("-l")
            .arg(&log)
            .args(["-w", "-t", "30", "-o"])
            .arg(format!("-p {port}"))
            .arg("start")
            // The server stays in this process group, away from the
            // terminal's Ctrl-C: the guardian stops it.
            .process_group(0);
        self.run(&mut cmd, "pg_ctl start")
            .map_err(|e| format!("{e}\n--- server log ---\n{}", self.log()))
    }

    fn pg_ctl(&self) -> Command {
        let mut cmd = self.command(&self.bindir.join("pg_ctl"));
        cmd.arg("-D").arg(&self.data);
        cmd
    }

    /// `program`, run as the `postgres` user when we are root, from the
    /// temporary directory (a cwd the server user can read).
    fn command(&self, program: &Path) -> Command {
        let mut cmd = if self.as_postgres {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", "postgres", "--"]).arg(program);
            cmd
        } else {
            Command::new(program)
        };
        cmd.current_dir(&self.root).stdin(Stdio::null());
        cmd
    }

    fn run(&self, cmd: &mut Command, what: &str) -> Result<(), String> {
        let out = cmd
            .output()
            .map_err(|e| format!("{what}: cannot run {:?}: {e}", cmd.get_program()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{what} failed ({}):\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }
}

impl Drop for TestPostgres {
    fn drop(&mut self) {
        if let Some(mut guardian) = self.guardian.take() {
            // Closing its stdin tells the guardian to stop the server and
            // delete the directory; wait until it has.
            drop(guardian.stdin.take());
            let _ = guardian.wait();
        } else {
            let _ = fs::remove_dir_all(&self.root);
        }
    }
}

/// A fresh database on the [shared](TestPostgres::shared) server, for the
/// test called `test`.
///
/// When no server can be started this returns `None` after printing why on
/// stderr (the test should then return early: skipped), unless
/// [`REQUIRE_ENV`] is set, in which case it panics so the test fails.
pub async fn fresh_database_or_skip(test: &str) -> Option<String> {
    let url = match TestPostgres::shared() {
        Ok(server) => server.fresh_database().await,
        Err(e) => Err(e),
    };
    url.map_err(|e| unavailable(test, &e)).ok()
}

/// Loads a plain-text `pg_dump` (written with `--inserts`, so it holds no
/// `COPY … FROM stdin`) into the database at `url`, e.g. a fresh one: how
/// upgrade tests recreate a database an older version wrote. The dump's
/// psql commands (lines starting with `\`, such as `\restrict`) are
/// skipped; everything else runs as one script on one connection, so the
/// dump's session settings end with it.
pub async fn load_dump(url: &str, dump: &str) -> Result<(), String> {
    let script: String = dump
        .lines()
        .filter(|line| !line.starts_with('\\'))
        .flat_map(|line| [line, "\n"])
        .collect();
    let mut conn = PgConnection::connect(url)
        .await
        .map_err(|e| format!("connecting to {url}: {e}"))?;
    let loaded = sqlx::raw_sql(AssertSqlSafe(script))
        .execute(&mut conn)
        .await
        .map(|_| ())
        .map_err(|e| format!("loading a dump into {url}: {e}"));
    let _ = conn.close().await;
    loaded
}

/// A private server (for tests that restart or stop it), or `None` after
/// printing why, like [`fresh_database_or_skip`] (which panics instead when
/// [`REQUIRE_ENV`] is set).
pub fn start_or_skip(test: &str) -> Option<TestPostgres> {
    TestPostgres::start()
        .map_err(|e| unavailable(test, &e))
        .ok()
}

/// Whether [`REQUIRE_ENV`] asks for failures instead of skips.
pub fn postgres_required() -> bool {
    std::env::var_os(REQUIRE_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

fn unavailable(test: &str, reason: &str) {
    if postgres_required() {
        panic!("{test}: PostgreSQL is required ({REQUIRE_ENV} is set) but unavailable: {reason}");
    }
    eprintln!(
        "SKIPPED {test}: no PostgreSQL test server: {reason}\n  \
         (run crates/switchboard-store-postgres/install-postgres.sh to install one; \
         set {REQUIRE_ENV}=1 to fail instead of skipping)"
    );
}

/// The directory with `initdb`, `pg_ctl` and `postgres`.
fn find_bindir() -> Result<PathBuf, String> {
    let is_server_dir = |dir: &Path| {
        ["initdb", "pg_ctl", "postgres"]
            .iter()
            .all(|b| dir.join(b).is_file())
    };
    let mut tried = Vec::new();
    if let Some(dir) = std::env::var_os(BINDIR_ENV) {
        let dir = PathBuf::from(dir);
        if is_server_dir(&dir) {
            return Ok(dir);
        }
        return Err(format!(
            "{BINDIR_ENV}={} has no initdb, pg_ctl and postgres",
            dir.display()
        ));
    }
    match Command::new("pg_config").arg("--bindir").output() {
        Ok(out) if out.status.success() => {
            let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            if is_server_dir(&dir) {
                return Ok(dir);
            }
            tried.push(format!("pg_config --bindir ({})", dir.display()));
        }
        _ => tried.push("pg_config (not found)".into()),
    }
    let mut versioned: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, dir)| is_server_dir(dir))
        .collect();
    versioned.sort();
    if let Some((_, dir)) = versioned.pop() {
        return Ok(dir);
    }
    tried.push("/usr/lib/postgresql/*/bin".into());
    if let Some(dir) = std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .find(|dir| is_server_dir(dir))
    {
        return Ok(dir);
    }
    tried.push("$PATH".into());
    Err(format!(
        "no PostgreSQL server binaries (initdb, pg_ctl, postgres) found; tried {}",
        tried.join(", ")
    ))
}

/// Whether this process runs as root (PostgreSQL then needs `runuser`).
fn running_as_root() -> bool {
    // `/proc/self` belongs to the process's effective user.
    match fs::metadata("/proc/self") {
        Ok(meta) => meta.uid() == 0,
        Err(_) => Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|out| out.stdout.trim_ascii() == b"0"),
    }
}

/// A new private directory; owned by `postgres` when the server runs as it.
fn make_root(for_postgres: bool) -> Result<PathBuf, String> {
    // Root's TMPDIR may be inside a home directory `postgres` cannot enter.
    let parent = if for_postgres {
        PathBuf::from("/tmp")
    } else {
        std::env::temp_dir()
    };
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let root = parent.join(format!(
        "switchboard-pg-{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    fs::DirBuilder::new()
        .mode(0o700)
        .create(&root)
        .map_err(|e| format!("creating {}: {e}", root.display()))?;
    if for_postgres {
        let (uid, gid) = match postgres_ids() {
            Ok(ids) => ids,
            Err(e) => {
                let _ = fs::remove_dir(&root);
                return Err(e);
            }
        };
        if let Err(e) = std::os::unix::fs::chown(&root, Some(uid), Some(gid)) {
            let _ = fs::remove_dir(&root);
            return Err(format!("handing {} to postgres: {e}", root.display()));
        }
    }
    Ok(root)
}

/// The uid and gid of the `postgres` user, from `/etc/passwd`.
fn postgres_ids() -> Result<(u32, u32), String> {
    let passwd =
        fs::read_to_string("/etc/passwd").map_err(|e| format!("reading /etc/passwd: {e}"))?;
    passwd
        .lines()
        .find_map(|line| {
            let mut fields = line.split(':');
            if fields.next()? != "postgres" {
                return None;
            }
            let _password = fields.next()?;
            Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
        })
        .ok_or_else(|| {
            "running as root, and there is no `postgres` user to run the server as \
             (PostgreSQL refuses root; Debian's postgresql package creates the user)"
                .to_string()
        })
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("finding a free port: {e}"))
}

/// The last `max` bytes of a file, as text ("" if unreadable).
fn read_tail(path: &Path, max: u64) -> String {
    let Ok(mut file) = fs::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(len.saturating_sub(max)));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}
