//! The shell's input on a terminal: a prompt, line editing and a history of the session's
//! commands, read as the lines of a `BufRead`, so that the shell reads a terminal and a script
//! alike. End of input (Ctrl-D) and Ctrl-C end the shell.

use std::io::{self, BufRead, Read};

use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;

/// A terminal read through a line editor.
pub struct Terminal {
    editor: DefaultEditor,
    /// Where the session is, for the prompt (zkCli's `[zk: HOST(CONNECTED) N]`).
    server: String,
    /// Lines read so far: the prompt's number.
    count: u64,
    /// The line being read, with its line break, and how much of it has been.
    line: Vec<u8>,
    read: usize,
}

impl Terminal {
    /// A line editor on the terminal, prompting with `server`.
    pub fn new(server: &str) -> io::Result<Self> {
        let editor = DefaultEditor::new().map_err(io::Error::other)?;
        Ok(Terminal {
            editor,
            server: server.to_owned(),
            count: 0,
            line: Vec::new(),
            read: 0,
        })
    }
}

impl Read for Terminal {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Terminal {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.read == self.line.len() {
            let prompt = format!("[zk: {}(CONNECTED) {}] ", self.server, self.count);
            self.read = 0;
            self.line = match self.editor.readline(&prompt) {
                Ok(line) => {
                    let _ = self.editor.add_history_entry(line.as_str());
                    self.count += 1;
                    format!("{line}\n").into_bytes()
                }
                Err(ReadlineError::Eof | ReadlineError::Interrupted) => Vec::new(),
                Err(error) => return Err(io::Error::other(error)),
            };
        }
        Ok(&self.line[self.read..])
    }

    fn consume(&mut self, amount: usize) {
        self.read = (self.read + amount).min(self.line.len());
    }
}
