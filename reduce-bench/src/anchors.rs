//! Reading the anchors' outputs (the CUB and PyTorch programs in `anchors/`, run in the same
//! device command): their times by case.

use std::collections::HashMap;
use std::path::PathBuf;

/// Times of the plain anchors (`anchors/cub_sweep.cu`, `argmax_anchor.cu`, `argmax_torch.py`):
/// lines `<case> n=<n> ms <ms> [correct yes|NO]`, as (case, n) -> (ms, verdict).
pub fn read_cub(path: &Option<PathBuf>) -> HashMap<(String, usize), (f64, String)> {
    let mut map = HashMap::new();
    let Some(path) = path else { return map };
    let Ok(text) = std::fs::read_to_string(path) else {
        eprintln!("warning: could not read {}", path.display());
        return map;
    };
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        // <case> n=<n> ms <ms> [correct yes|NO]
        if words.len() >= 4 && words[1].starts_with("n=") && words[2] == "ms" {
            let (Ok(n), Ok(ms)) = (words[1][2..].parse::<usize>(), words[3].parse::<f64>()) else {
                continue;
            };
            let verdict = words
                .iter()
                .position(|w| *w == "correct")
                .map(|i| words[i + 1].to_string())
                .unwrap_or_default();
            map.insert((words[0].to_string(), n), (ms, verdict));
        }
    }
    map
}

/// Times of the anchors of `bench api` (`anchors/cub_latency.cu`, `anchors/torch_api.py`):
/// lines `api <peer> <call> <monoid> <layout>@<n> us <us>`, keyed `<peer> <call> <monoid>
/// <layout>@<n>`.
pub fn read_api_refs(path: &Option<PathBuf>) -> HashMap<String, f64> {
    let mut map = HashMap::new();
    let Some(text) = path.as_ref().and_then(|p| std::fs::read_to_string(p).ok()) else {
        return map;
    };
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if let ["api", peer, call, monoid, key, "us", us] = w[..] {
            if let Ok(us) = us.parse::<f64>() {
                map.insert(format!("{peer} {call} {monoid} {key}"), us);
            }
        }
    }
    map
}

/// Times of the segmented anchors (`anchors/cub_sweep.cu ... segmented`, `segargmax_anchor.cu`,
/// `torch_seg.py`): CUB keys `<routine>_<monoid> <layout>`, torch keys `<routine> <layout>`.
pub fn read_refs(path: &Option<PathBuf>) -> HashMap<String, f64> {
    let mut map = HashMap::new();
    let Some(text) = path.as_ref().and_then(|p| std::fs::read_to_string(p).ok()) else {
        return map;
    };
    for line in text.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let Some(ms) = w
            .iter()
            .position(|x| *x == "ms")
            .and_then(|at| w.get(at + 1))
            .and_then(|x| x.parse::<f64>().ok())
        else {
            continue;
        };
        match w.first() {
            Some(&"cubseg") if w.len() > 3 => map.insert(format!("{} {}", w[1], w[2]), ms),
            Some(first) if first.starts_with("torch_") && w.len() > 2 => {
                map.insert(format!("{} {}", w[0], w[1]), ms)
            }
            _ => None,
        };
    }
    map
}
