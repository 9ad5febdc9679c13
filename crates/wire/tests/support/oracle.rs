//! Runs `support/dnspython_oracle.py` and exchanges JSON lines with it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::Value;

/// A running dnspython oracle.
pub struct Oracle {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Oracle {
    /// Starts the oracle, or explains why it cannot run and returns `None`.
    pub fn start() -> Option<Oracle> {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/dnspython_oracle.py");
        let probe = Command::new("python3").args(["-c", "import dns.message"]).output();
        if !probe.is_ok_and(|o| o.status.success()) {
            eprintln!("SKIPPED: python3 with dnspython is not available (pip install dnspython)");
            return None;
        }
        let mut child = Command::new("python3")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .ok()?;
        let stdin = child.stdin.take()?;
        let stdout = BufReader::new(child.stdout.take()?);
        Some(Oracle { child, stdin, stdout })
    }

    /// Sends one request and waits for its answer.
    pub fn ask(&mut self, request: Value) -> Value {
        writeln!(self.stdin, "{request}").expect("oracle stdin");
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("oracle stdout");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("oracle said {line:?}: {e}"))
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Bytes from hex.
pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}
