//! Reading a secret from the console on Windows.

use std::io::{BufRead, IsTerminal, Write};
use std::os::windows::io::AsRawHandle;

use windows_sys::Win32::System::Console::{CONSOLE_MODE, ENABLE_ECHO_INPUT, GetConsoleMode, SetConsoleMode};

/// One line of standard input; on a console it is read with echo off (what is typed or pasted
/// never appears on the screen), the console's mode put back afterwards, whatever happens.
/// `prompt` is shown (on a console only) once echo is off, so nothing typed at it is echoed.
pub fn read_secret_line(prompt: &dyn Fn()) -> std::io::Result<String> {
    let stdin = std::io::stdin();
    let mut line = String::new();
    let handle = stdin.as_raw_handle();
    let mut saved: CONSOLE_MODE = 0;
    // SAFETY: `saved` is a live local; a handle that is no console fails the call.
    if !stdin.is_terminal() || unsafe { GetConsoleMode(handle, &mut saved) } == 0 {
        stdin.lock().read_line(&mut line)?;
        return Ok(line);
    }
    struct Restore(std::os::windows::io::RawHandle, CONSOLE_MODE);
    impl Drop for Restore {
        fn drop(&mut self) {
            // SAFETY: the console handle outlives the read; the mode is the one read from it.
            unsafe { SetConsoleMode(self.0, self.1) };
        }
    }
    let _restore = Restore(handle, saved);
    // SAFETY: as above.
    if unsafe { SetConsoleMode(handle, saved & !ENABLE_ECHO_INPUT) } == 0 {
        return Err(std::io::Error::last_os_error());
    }
    prompt();
    stdin.lock().read_line(&mut line)?;
    // Enter was not echoed either: the next output starts on a line of its own.
    let _ = writeln!(std::io::stderr());
    Ok(line)
}
