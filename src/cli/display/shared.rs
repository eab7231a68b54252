//! A writer two owners can write to in turn: the terminfo display hands one end to the plain
//! renderer it wraps and keeps the other for its control sequences, so both reach the same
//! stream in the order they were written.

use std::io::{self, Write};
use std::sync::{Arc, Mutex, PoisonError};

#[derive(Clone)]
pub struct SharedWriter(Arc<Mutex<Box<dyn Write + Send>>>);

impl SharedWriter {
    pub fn new(inner: Box<dyn Write + Send>) -> Self {
        SharedWriter(Arc::new(Mutex::new(inner)))
    }
}

impl Write for SharedWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .flush()
    }
}

/// A writer whose bytes a test can read back.
#[cfg(test)]
#[derive(Clone, Default)]
pub struct Captured(Arc<Mutex<Vec<u8>>>);

#[cfg(test)]
impl Captured {
    pub fn boxed(&self) -> Box<dyn Write + Send> {
        Box::new(self.clone())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.0.lock().unwrap().clone()
    }
}

#[cfg(test)]
impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
