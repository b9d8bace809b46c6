//! One running program: spawned in a process group of its own, stdout
//! read in bounded pieces, stderr's tail kept, stopped with SIGTERM and
//! then SIGKILL.

use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::OwnedSemaphorePermit;

use super::ExecConfig;
use super::error::ExecError;

/// A program the agent started, with what it holds: its concurrency slot
/// (released when this is dropped) and its pipes.
pub(crate) struct Program {
    child: Child,
    /// Its process group (the program's pid: it leads a group of its own,
    /// so signals reach whatever it started too).
    group: Option<Pid>,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// Bytes read from stdout so far, against [`ExecConfig::max_output_bytes`].
    read: usize,
    stderr: Arc<Tail>,
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
    _slot: OwnedSemaphorePermit,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program")
            .field("pid", &self.child.id())
            .finish_non_exhaustive()
    }
}

/// What a read of stdout gave.
pub(crate) enum Read {
    /// Some bytes were appended.
    Bytes,
    /// A whole line (its `\n` included, unless stdout ended without one)
    /// was appended.
    Line,
    /// stdout is closed.
    Eof,
}

impl Program {
    /// Starts `config`'s program for the task `task_id` in `context_id`.
    pub(crate) fn spawn(
        config: &ExecConfig,
        task_id: &str,
        context_id: &str,
        slot: OwnedSemaphorePermit,
    ) -> Result<Self, ExecError> {
        let mut cmd = Command::new(&config.command);
        cmd.args(&config.args)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // A group of its own: SIGTERM/SIGKILL reach its children too,
            // and a Ctrl-C at the server's terminal does not.
            .process_group(0)
            // Whatever path drops it (a panic, a dropped run), it dies.
            .kill_on_drop(true);
        for name in &config.pass_env {
            if let Some(value) = std::env::var_os(name) {
                cmd.env(name, value);
            }
        }
        cmd.envs(&config.env)
            .env("A2A_TASK_ID", task_id)
            .env("A2A_CONTEXT_ID", context_id);
        if let Some(dir) = &config.working_dir {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn().map_err(|source| ExecError::Spawn {
            command: config.command.clone(),
            source,
        })?;
        let group = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(Pid::from_raw);
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(ExecError::Io(std::io::Error::other(
                "the program's pipes were not opened",
            )));
        };
        let tail = Arc::new(Tail::new(config.stderr_tail_bytes));
        let reader = tokio::spawn(read_stderr(stderr, tail.clone()));
        Ok(Program {
            child,
            group,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout),
            read: 0,
            stderr: tail,
            stderr_reader: Some(reader),
            _slot: slot,
        })
    }

    /// Writes `bytes` to stdin. A program that closed its stdin, or exited,
    /// is not an error here: its exit tells.
    pub(crate) async fn write(&mut self, bytes: &[u8]) {
        if let Some(stdin) = self.stdin.as_mut()
            && (stdin.write_all(bytes).await.is_err() || stdin.flush().await.is_err())
        {
            self.stdin = None;
        }
    }

    /// Closes stdin (the program reads end-of-file).
    pub(crate) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Takes stdin, to be written from another task.
    pub(crate) fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// Reads what stdout has into `buf`, at most up to the output limit.
    /// Cancel-safe: nothing is read unless it is appended.
    pub(crate) async fn read_some(
        &mut self,
        buf: &mut Vec<u8>,
        limit: usize,
    ) -> Result<Read, ExecError> {
        let room = (limit + 1).saturating_sub(self.read).min(64 * 1024);
        let mut chunk = (&mut self.stdout).take(room as u64);
        let n = chunk.read_buf(buf).await?;
        self.read += n;
        if self.read > limit {
            return Err(ExecError::OutputTooLarge { limit });
        }
        Ok(if n == 0 { Read::Eof } else { Read::Bytes })
    }

    /// Reads up to the end of the next line into `line` (partial lines stay
    /// there across calls, so this is cancel-safe).
    pub(crate) async fn read_line(
        &mut self,
        line: &mut Vec<u8>,
        limit: usize,
    ) -> Result<Read, ExecError> {
        let room = (limit + 1).saturating_sub(self.read);
        let before = line.len();
        let mut bounded = (&mut self.stdout).take(room as u64);
        let n = bounded.read_until(b'\n', line).await?;
        self.read += line.len() - before;
        if self.read > limit {
            return Err(ExecError::OutputTooLarge { limit });
        }
        Ok(match (n, line.is_empty()) {
            (0, true) => Read::Eof,
            _ => Read::Line,
        })
    }

    /// Waits for the program to exit.
    pub(crate) async fn wait(&mut self) -> Result<ExitStatus, ExecError> {
        Ok(self.child.wait().await?)
    }

    /// Stops the program: SIGTERM to its group, SIGKILL after `grace` if it
    /// has not exited; returns once it has (it is reaped, never left a zombie).
    pub(crate) async fn stop(&mut self, grace: Duration) {
        self.stdin = None;
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        self.signal(Signal::TERM);
        if tokio::time::timeout(grace, self.child.wait()).await.is_ok() {
            return;
        }
        tracing::debug!(pid = ?self.child.id(), "the program outlived its grace period: SIGKILL");
        self.signal(Signal::KILL);
        // SIGKILL cannot be ignored; `kill` also covers a failed group signal.
        let _ = self.child.kill().await;
    }

    fn signal(&mut self, signal: Signal) {
        let sent = self.group.map(|g| kill_process_group(g, signal));
        if !matches!(sent, Some(Ok(()))) && signal == Signal::KILL {
            let _ = self.child.start_kill();
        } else if !matches!(sent, Some(Ok(()))) {
            // No group to signal: at least the program itself.
            if let Some(pid) = self
                .child
                .id()
                .and_then(|id| i32::try_from(id).ok())
                .and_then(Pid::from_raw)
            {
                let _ = rustix::process::kill_process(pid, signal);
            }
        }
    }

    /// stderr's last bytes (after it closed, or after `grace` if something
    /// the program started still holds it open), lossily decoded.
    pub(crate) async fn stderr_tail(&mut self, grace: Duration) -> String {
        if let Some(reader) = self.stderr_reader.take() {
            let _ = tokio::time::timeout(grace, reader).await;
        }
        self.stderr.text()
    }
}

/// The last bytes of a stream, at most `cap`.
pub(crate) struct Tail {
    cap: usize,
    bytes: Mutex<VecDeque<u8>>,
}

impl Tail {
    fn new(cap: usize) -> Self {
        Tail {
            cap,
            bytes: Mutex::new(VecDeque::with_capacity(cap.min(64 * 1024))),
        }
    }

    fn push(&self, data: &[u8]) {
        let Ok(mut bytes) = self.bytes.lock() else {
            return;
        };
        let data = &data[data.len().saturating_sub(self.cap)..];
        let held = bytes.len();
        let overflow = (held + data.len()).saturating_sub(self.cap);
        bytes.drain(..overflow.min(held));
        bytes.extend(data);
    }

    fn text(&self) -> String {
        let Ok(bytes) = self.bytes.lock() else {
            return String::new();
        };
        let (a, b) = bytes.as_slices();
        let mut all = Vec::with_capacity(a.len() + b.len());
        all.extend_from_slice(a);
        all.extend_from_slice(b);
        String::from_utf8_lossy(&all).trim().to_string()
    }
}

async fn read_stderr(mut stderr: tokio::process::ChildStderr, tail: Arc<Tail>) {
    let mut buf = vec![0_u8; 8192];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => tail.push(&buf[..n]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_bytes_only() {
        let tail = Tail::new(5);
        tail.push(b"abc");
        tail.push(b"defg");
        assert_eq!(tail.text(), "cdefg");
        tail.push(b"0123456789");
        assert_eq!(tail.text(), "56789");
    }
}
