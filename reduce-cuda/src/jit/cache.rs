//! The on-disk CUBIN cache, so that a second process skips NVRTC.
//!
//! Key: a hash of (source text, NVRTC options, NVRTC version, arch). Location:
//! `$REDUCE_CUDA_CACHE_DIR` if set (`off` disables the disk cache), else
//! `$XDG_CACHE_HOME/reduce-cuda`, else `$HOME/.cache/reduce-cuda`. Each entry records its full
//! key hash, a second independent hash of the key and a checksum of the CUBIN: an entry that
//! does not match in every respect — truncated, corrupt, or from another key — is recompiled
//! and rewritten, never trusted. Writes go to a temporary file renamed into place, so
//! concurrent processes never see half an entry.

use std::io::Write;
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"RDCUBIN1";
/// Magic, primary key, secondary key, CUBIN length, CUBIN checksum, reserved.
const HEADER: usize = 8 + 8 + 8 + 8 + 8 + 8;

/// The environment variable that moves (or, with `off`, disables) the disk cache.
pub const CACHE_DIR_ENV: &str = "REDUCE_CUDA_CACHE_DIR";

/// The cache folder, or None when disabled or no home is known.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(CACHE_DIR_ENV) {
        if dir == "off" || dir.is_empty() {
            return None;
        }
        return Some(PathBuf::from(dir));
    }
    if let Some(xdg) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(xdg).join("reduce-cuda"));
    }
    std::env::var_os("HOME")
        .filter(|d| !d.is_empty())
        .map(|home| PathBuf::from(home).join(".cache").join("reduce-cuda"))
}

/// 64-bit FNV-1a, seeded: stable across processes, builds and platforms.
pub(crate) fn fnv1a(seed: u64, parts: &[&[u8]]) -> u64 {
    let mut h = seed;
    for part in parts {
        for &b in *part {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^= 0xff; // separates the parts
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The identity of one compiled kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheKey {
    primary: u64,
    secondary: u64,
}

impl CacheKey {
    /// Hashes everything that determines the CUBIN.
    pub fn new(source: &str, options: &[String], nvrtc_version: (i32, i32), arch: &str) -> Self {
        let version = format!("nvrtc {}.{}", nvrtc_version.0, nvrtc_version.1);
        let options = options.join("\u{1f}");
        let parts: [&[u8]; 4] = [
            source.as_bytes(),
            options.as_bytes(),
            version.as_bytes(),
            arch.as_bytes(),
        ];
        CacheKey {
            primary: fnv1a(0xcbf2_9ce4_8422_2325, &parts),
            secondary: fnv1a(0x6a09_e667_f3bc_c909, &parts),
        }
    }

    fn file_name(&self) -> String {
        format!("{:016x}.cubin", self.primary)
    }
}

/// Reads the entry for `key` from `dir`; None if absent or not exactly right.
pub fn load(dir: &Path, key: CacheKey) -> Option<Vec<u8>> {
    let bytes = std::fs::read(entry_path(dir, key)).ok()?;
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return None;
    }
    let word = |i: usize| u64::from_le_bytes(bytes[8 + 8 * i..16 + 8 * i].try_into().unwrap());
    let (primary, secondary, len, checksum) = (word(0), word(1), word(2), word(3));
    let cubin = &bytes[HEADER..];
    let intact = primary == key.primary
        && secondary == key.secondary
        && len == cubin.len() as u64
        && checksum == fnv1a(0, &[cubin]);
    intact.then(|| cubin.to_vec())
}

/// Writes the entry for `key` atomically. Failures are ignored: the cache is an optimisation.
pub fn store(dir: &Path, key: CacheKey, cubin: &[u8]) {
    let _ = try_store(dir, key, cubin);
}

fn try_store(dir: &Path, key: CacheKey, cubin: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        "{}.tmp-{}-{:?}",
        key.file_name(),
        std::process::id(),
        std::thread::current().id()
    ));
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(MAGIC)?;
        for word in [
            key.primary,
            key.secondary,
            cubin.len() as u64,
            fnv1a(0, &[cubin]),
        ] {
            f.write_all(&word.to_le_bytes())?;
        }
        f.write_all(&[0u8; 8])?; // reserved
        f.write_all(cubin)?;
        f.sync_all()?;
        std::fs::rename(&tmp, entry_path(dir, key))
    };
    // No partial file is left behind (a full disk would collect one per compile).
    write().inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// The path of the entry for `key`.
fn entry_path(dir: &Path, key: CacheKey) -> PathBuf {
    dir.join(key.file_name())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("reduce-cache-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn round_trips_and_rejects_every_kind_of_damage() {
        let dir = temp_dir("damage");
        let key = CacheKey::new("src", &["-a".into()], (13, 0), "sm_90");
        assert_eq!(load(&dir, key), None);
        store(&dir, key, b"cubin bytes");
        assert_eq!(load(&dir, key).as_deref(), Some(&b"cubin bytes"[..]));

        let path = entry_path(&dir, key);
        let good = std::fs::read(&path).unwrap();
        // A flipped payload byte, a truncation, a wrong magic: all rejected.
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        for bad in [
            flipped,
            good[..good.len() - 1].to_vec(),
            b"garbage".to_vec(),
        ] {
            std::fs::write(&path, bad).unwrap();
            assert_eq!(load(&dir, key), None);
        }
        // Another key's entry under this name is rejected too.
        let other = CacheKey::new("other src", &["-a".into()], (13, 0), "sm_90");
        store(&dir, other, b"x");
        std::fs::copy(entry_path(&dir, other), &path).unwrap();
        assert_eq!(load(&dir, key), None);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn every_part_of_the_key_matters() {
        let base = CacheKey::new("src", &["-a".into()], (13, 0), "sm_90");
        assert_ne!(
            base,
            CacheKey::new("src2", &["-a".into()], (13, 0), "sm_90")
        );
        assert_ne!(base, CacheKey::new("src", &["-b".into()], (13, 0), "sm_90"));
        assert_ne!(base, CacheKey::new("src", &["-a".into()], (13, 1), "sm_90"));
        assert_ne!(base, CacheKey::new("src", &["-a".into()], (13, 0), "sm_80"));
    }
}
