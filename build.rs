//! Build script: lays out the release binary's code and data for a fast start.
//!
//! A short run (a turn, `--version`) executes about 2,300 functions spread over the whole
//! 3.8 MB of code, and the kernel maps code in windows of 64 KB or more at each first touch:
//! about 45 such faults before the backend starts, each several microseconds on a phone or a
//! VM, and as many pages to unmap at exit. `link/startup-order.txt` lists those functions
//! (written by `scripts/startup-order.sh`); the linker puts them side by side at the start of
//! the code, and a CLI turn takes 8 such faults before its spawn. A name the list has and the
//! binary lacks (after a dependency or toolchain update) is skipped silently: the binary is
//! still correct, only less compact until the list is written again.
//!
//! A position-independent build's 14,000 relative relocations (each pointer in a vtable or
//! a static table, set at start because the load address is random) are packed as RELR, a
//! bitmap of a few KB, instead of 24-byte RELA entries: 340 KB less in the binary, and less
//! for the loader to map and read at every start (a CLI turn 0.17-0.24 ms faster). Only when
//! the C library linked against can load them (glibc 2.36 or later); otherwise the build is
//! as before.
//!
//! But the binary is linked as a position-dependent executable (`-no-pie`): it is loaded at
//! the address it was linked for, so the loader applies none of those relocations, and the
//! 280 KB of vtables and tables they would set are read from the file as they are, not
//! copied into private memory a page at a time at every start: about 60 page faults fewer
//! before the backend starts (3-5 µs each on the project's VM), a CLI turn 0.26-0.53 ms
//! faster, the largest single cut left. The price is that address-space layout
//! randomisation no longer moves the binary's own code and data; the stack, the heap, the C
//! library and every other mapping are still placed at random. A build that chooses its
//! relocation model gets that one instead, its relocations packed as RELR:
//! `RUSTFLAGS="-C relocation-model=pie" cargo build --release --target
//! x86_64-unknown-linux-gnu` (with `--target`, so that the flag is not applied to the
//! procedural macros, which cannot be built that way).
//!
//! Only where the linker is known to be LLD: x86_64 Linux with rustc 1.90 or later, which
//! links with its own LLD unless told otherwise. GNU ld does not know the option.
//!
//! In the same builds the unwinder is linked in from libgcc_eh.a rather than loaded from
//! libgcc_s.so: one shared library fewer for the loader to find, map and relocate at every
//! start, and no run of its constructor, which asks the CPU for its features (CPUID, a trap
//! to the hypervisor on a VM). Measured: a CLI turn 0.45 ms faster, `--version` 1.3 -> 1.1 ms,
//! the binary 17 KB larger. Rust's standard library asks for `-lgcc_s`; a linker script of
//! that name in a folder searched first answers with the static library (what `-static-libgcc`
//! does for C). Backtraces and the panic hook work the same.
//!
//! `AGENT_LOOP_LINK_MAP=FILE` also asks the linker for a map of the binary (which function
//! went where), which `scripts/startup-order.sh` reads to name the code a run executed.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=link/startup-order.txt");
    println!("cargo:rerun-if-env-changed=AGENT_LOOP_LINK_MAP");
    if !links_with_lld() {
        return;
    }
    let order = Path::new(&env::var("CARGO_MANIFEST_DIR").unwrap_or_default())
        .join("link")
        .join("startup-order.txt");
    let release = env::var("PROFILE").as_deref() == Ok("release");
    // `-Wl,` splits its argument at commas.
    if release && order.is_file() && !order.to_string_lossy().contains(',') {
        link_arg(&format!("--symbol-ordering-file={}", order.display()));
        link_arg("--no-warn-symbol-ordering");
    }
    if release {
        if !env::var("CARGO_ENCODED_RUSTFLAGS")
            .unwrap_or_default()
            .contains("relocation-model")
        {
            // An option of the C compiler driver, which links; the last of `-pie` (rustc's)
            // and `-no-pie` wins.
            println!("cargo:rustc-link-arg-bin=agent-loop=-no-pie");
        }
        static_unwinder();
        if c_library_knows_relr() {
            link_arg("-z,pack-relative-relocs");
        }
    }
    if let Ok(map) = env::var("AGENT_LOOP_LINK_MAP") {
        link_arg(&format!("-Map={map}"));
    }
}

fn link_arg(arg: &str) {
    println!("cargo:rustc-link-arg-bin=agent-loop=-Wl,{arg}");
}

/// Puts `libgcc_s.so`, a linker script naming the C compiler's `libgcc_eh.a`, in a folder
/// the linker searches before the system's; nothing changes when the compiler has no such
/// file.
fn static_unwinder() {
    let Ok(out) = env::var("OUT_DIR") else { return };
    let Some(archive) = c_compiler_file("libgcc_eh.a") else {
        return;
    };
    let found = archive.to_string_lossy();
    if found.contains(['"', '\n']) {
        return;
    }
    let dir = Path::new(&out).join("static-unwinder");
    let script = format!("INPUT(\"{found}\")\n");
    if std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(dir.join("libgcc_s.so"), script))
        .is_ok()
    {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
}

/// Whether the C library the binary links against can load relative relocations packed as
/// RELR: glibc 2.36 or later, which defines the version `GLIBC_ABI_DT_RELR` that the linker
/// then requires (an older glibc refuses such a binary at start rather than misloading it).
fn c_library_knows_relr() -> bool {
    c_compiler_file("libc.so.6")
        .and_then(|libc| std::fs::read(libc).ok())
        .is_some_and(|bytes| bytes.windows(17).any(|w| w == b"GLIBC_ABI_DT_RELR"))
}

/// The file of that name the C compiler (the linker's driver) would use.
fn c_compiler_file(name: &str) -> Option<PathBuf> {
    let out = Command::new("cc")
        .arg(format!("-print-file-name={name}"))
        .output()
        .ok()?;
    // Without the file, cc prints the bare name back.
    let path = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    (path.is_absolute() && path.is_file()).then_some(path)
}

/// The default linker of x86_64-unknown-linux-gnu is the toolchain's LLD from rustc 1.90 on;
/// a linker chosen in the configuration or the flags may be any other.
fn links_with_lld() -> bool {
    let var = |k: &str| env::var(k).unwrap_or_default();
    if var("TARGET") != "x86_64-unknown-linux-gnu"
        || env::var_os("RUSTC_LINKER").is_some()
        || var("CARGO_ENCODED_RUSTFLAGS").contains("link")
    {
        return false;
    }
    let version = Command::new(env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    let minor = version
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').nth(1))
        .and_then(|m| m.parse::<u32>().ok());
    version.starts_with("rustc 1.") && minor.is_some_and(|m| m >= 90)
}
