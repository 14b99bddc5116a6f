//! What the modes write besides their CSV files: text reports and SVG plots.

use reduce_cuda::reduce_core::monoid::bytes_of;
use reduce_cuda::DeviceCopy;
use std::fmt::Write as _;

/// Prints the lines (the short table the device run shows last) and writes them to `out/file`.
pub fn report(out: &std::path::Path, file: &str, lines: &[String]) {
    let text = lines.join("\n");
    println!("{text}");
    std::fs::write(out.join(file), text + "\n").unwrap_or_else(|e| panic!("writing {file}: {e}"));
}

/// A self-contained SVG line plot.
pub fn svg_plot(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> String {
    let (w, h, left, right, top, bottom) = (900.0, 520.0, 70.0, 230.0, 40.0, 50.0);
    let pts = series.iter().flat_map(|s| s.1.iter());
    let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0.0f64);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        if y.is_finite() {
            y1 = y1.max(y);
        }
    }
    if x0 >= x1 {
        x1 = x0 + 1.0;
    }
    let y1 = if y1 <= 0.0 { 1.0 } else { y1 * 1.08 };
    let px = |x: f64| left + (x - x0) / (x1 - x0) * (w - left - right);
    let py = |y: f64| h - bottom - y / y1 * (h - top - bottom);
    let colors = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
        "#bcbd22", "#17becf",
    ];
    let mut s = format!("<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' fill='white'/>\n<text x='{}' y='22' font-size='15'>{title}</text>\n", left);
    for i in 0..=5 {
        let y = y1 * i as f64 / 5.0;
        let (x_end, y_px, x_text) = (w - right, py(y), left - 6.0);
        let _ = writeln!(s, "<line x1='{left}' x2='{x_end}' y1='{y_px}' y2='{y_px}' stroke='#ddd'/><text x='{x_text}' y='{}' text-anchor='end'>{y:.0}</text>", y_px + 4.0);
    }
    let xticks = (x1 - x0).round().max(1.0) as usize;
    let step = xticks.div_ceil(12).max(1);
    for i in (0..=xticks).step_by(step) {
        let x = x0 + i as f64;
        let _ = writeln!(
            s,
            "<text x='{}' y='{}' text-anchor='middle'>{x:.0}</text>",
            px(x),
            h - bottom + 18.0
        );
    }
    let _ = writeln!(s, "<text x='{}' y='{}' text-anchor='middle'>{x_label}</text><text x='16' y='{}' transform='rotate(-90 16 {})' text-anchor='middle'>{y_label}</text>", (left + w - right) / 2.0, h - 10.0, h / 2.0, h / 2.0);
    let _ = writeln!(s, "<line x1='{left}' x2='{left}' y1='{top}' y2='{}' stroke='black'/><line x1='{left}' x2='{}' y1='{1}' y2='{1}' stroke='black'/>", h - bottom, w - right);
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = colors[i % colors.len()];
        let dash = if name.contains("roof") || name.contains("CUB") {
            " stroke-dasharray='6 4'"
        } else {
            ""
        };
        let path: Vec<String> = pts
            .iter()
            .filter(|p| p.1.is_finite())
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        if !path.is_empty() {
            let _ = writeln!(
                s,
                "<polyline fill='none' stroke='{color}' stroke-width='2'{dash} points='{}'/>",
                path.join(" ")
            );
        }
        let ly = top + 10.0 + i as f64 * 18.0;
        let _ = writeln!(s, "<line x1='{}' x2='{}' y1='{ly}' y2='{ly}' stroke='{color}' stroke-width='3'{dash}/><text x='{}' y='{}'>{name}</text>", w - right + 10.0, w - right + 34.0, w - right + 40.0, ly + 4.0);
    }
    s.push_str("</svg>\n");
    s
}

/// FNV-1a of the bytes of `xs` (padding bytes as zeros), in hex: the `bits` column of an output
/// whose bits are compared across devices (`bench portable`).
pub fn hash_of<M: DeviceCopy>(xs: &[M]) -> String {
    let h = bytes_of(xs).iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    format!("{h:016x}")
}
