//! Reading a secret from the terminal.

use std::io::{BufRead, IsTerminal};

/// One line of standard input; on a terminal it is read with echo off (as `docker login`, `gh`
/// and uv read secrets): what is typed or pasted never appears on the screen, nor in a
/// terminal's scrollback. The terminal's settings are put back afterwards, whatever happens.
/// `prompt` is shown (on a terminal only) once echo is off: a token pasted the instant the
/// prompt appears is never echoed.
pub fn read_secret_line(prompt: &dyn Fn()) -> std::io::Result<String> {
    use rustix::termios::{LocalModes, OptionalActions, Termios, tcgetattr, tcsetattr};
    let stdin = std::io::stdin();
    let mut line = String::new();
    if !stdin.is_terminal() {
        stdin.lock().read_line(&mut line)?;
        return Ok(line);
    }
    struct Restore(Termios);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &self.0);
        }
    }
    let saved = tcgetattr(&stdin)?;
    let mut silent = saved.clone();
    silent.local_modes.remove(LocalModes::ECHO);
    // Enter still moves to the next line, so that the next output does not follow the prompt.
    silent.local_modes.insert(LocalModes::ECHONL);
    let _restore = Restore(saved);
    tcsetattr(&stdin, OptionalActions::Now, &silent)?;
    prompt();
    crate::testhook::point(crate::testhook::SECRET_PROMPTED);
    stdin.lock().read_line(&mut line)?;
    Ok(line)
}
