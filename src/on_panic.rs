//! What a panic must still undo. The release build aborts on a panic instead of unwinding
//! (`panic = "abort"` in Cargo.toml: no landing pads or unwind tables, 0.9 MB less), so no
//! destructor runs then. Whatever must not outlive agent-loop, a backend's process group above
//! all, registers its undoing here for as long as it exists, and the panic hook runs every
//! registered undo before the process ends, with status 101 as an unwinding panic did.
//! Unwinding builds (the tests) need no hook: their destructors run.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

type Undo = Box<dyn FnOnce() + Send>;

/// Undos waiting for a panic, each under the id of its [`OnPanic`].
struct Registry {
    pending: Mutex<Vec<(u64, Undo)>>,
    next: AtomicU64,
}

static REGISTRY: Registry = Registry::new();

impl Registry {
    const fn new() -> Self {
        Registry {
            pending: Mutex::new(Vec::new()),
            next: AtomicU64::new(0),
        }
    }

    fn pending(&self) -> MutexGuard<'_, Vec<(u64, Undo)>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn register(&'static self, undo: Undo) -> OnPanic {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.pending().push((id, undo));
        OnPanic { id, registry: self }
    }

    /// Takes the undo registered under `id` out of the registry.
    fn take(&self, id: u64) -> Option<Undo> {
        let mut pending = self.pending();
        let at = pending.iter().position(|(i, _)| *i == id)?;
        Some(pending.remove(at).1)
    }

    /// Runs every registered undo, oldest first, and forgets them.
    fn run_all(&self) {
        let undos = std::mem::take(&mut *self.pending());
        for (_, undo) in undos {
            undo();
        }
    }
}

/// Keeps an undo registered: it runs if a panic ends agent-loop while this is alive, and is
/// forgotten (never run) when this is dropped.
#[must_use = "the undo is forgotten as soon as this is dropped"]
pub struct OnPanic {
    id: u64,
    registry: &'static Registry,
}

impl Drop for OnPanic {
    fn drop(&mut self) {
        // Dropped outside the lock: what the closure holds may take locks of its own.
        drop(self.registry.take(self.id));
    }
}

/// Registers `undo` to run if a panic ends agent-loop before the returned guard is dropped.
pub fn on_panic(undo: impl FnOnce() + Send + 'static) -> OnPanic {
    REGISTRY.register(Box::new(undo))
}

/// Installs the panic hook of an aborting build: every registered undo, then the usual
/// message (and backtrace, if asked for), then exit status 101. Does nothing when panics
/// unwind.
pub fn install_hook() {
    if cfg!(panic = "unwind") {
        return;
    }
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        REGISTRY.run_all();
        report(info);
        std::process::exit(101);
    }));
}

#[cfg(test)]
impl OnPanic {
    /// Runs this undo now, as a panic would.
    pub fn run_now(self) {
        if let Some(undo) = self.registry.take(self.id) {
            undo();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A registry of the test's own: the tests run in parallel, and the global one holds the
    /// undos of the others' children.
    fn registry() -> &'static Registry {
        Box::leak(Box::new(Registry::new()))
    }

    fn counter() -> (Arc<AtomicU64>, impl Fn() -> Undo) {
        let count = Arc::new(AtomicU64::new(0));
        let c = count.clone();
        let make = move || -> Undo {
            let c = c.clone();
            Box::new(move || {
                c.fetch_add(1, Ordering::SeqCst);
            })
        };
        (count, make)
    }

    #[test]
    fn a_panic_runs_what_is_registered_and_not_what_was_dropped() {
        let registry = registry();
        let (count, undo) = counter();
        let kept = registry.register(undo());
        drop(registry.register(undo()));
        let _also_kept = registry.register(undo());
        registry.run_all();
        assert_eq!(count.load(Ordering::SeqCst), 2);
        // Run once: dropping the guards afterwards runs nothing again.
        drop(kept);
        registry.run_all();
        assert_eq!(count.load(Ordering::SeqCst), 2);
        assert!(registry.pending().is_empty());
    }

    #[test]
    fn run_now_runs_one_undo_once() {
        let registry = registry();
        let (count, undo) = counter();
        let one = registry.register(undo());
        let _other = registry.register(undo());
        one.run_now();
        assert_eq!(count.load(Ordering::SeqCst), 1);
        assert_eq!(registry.pending().len(), 1);
    }
}
