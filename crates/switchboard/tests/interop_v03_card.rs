//! The official A2A 0.3 Python client (PyPI `a2a-sdk` 0.3.x, in
//! `interop/.venv03`) against the real `switchboard serve` with **no card
//! flags**: it must discover the agent from the default card, complete a
//! send and a stream, and see the A2A error (TaskNotFound, UnsupportedOperation)
//! when it streams to an unknown or a finished task, not a transport error
//! (`interop/py03/default_card.py`).
//!
//! Skipped with a message when the venv is missing, unless
//! `SWITCHBOARD_REQUIRE_INTEROP` is set (as in CI); `interop/setup.sh`
//! installs it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod proc;

use proc::{Serve, interop_python, run_interop_driver};

/// Steps `default_card.py` runs; all must pass.
const STEPS: u32 = 7;

#[test]
fn python_03_client_discovers_the_default_card_and_sees_stream_errors() {
    let Some(python) = interop_python(".venv03") else {
        return;
    };
    // No card flags: the default card is what is under test.
    let s = Serve::start("memory");
    run_interop_driver(&python, "interop/py03/default_card.py", &[&s.base()], STEPS);
}
