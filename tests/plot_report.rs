//! Figures (PNG/SVG with embedded fonts) and atomic results folders.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use hybridopt::plot::{write_figure, Figure, LineKind, Marker, Panel, Series};
use hybridopt::report::{write_atomic, Staging};
use ndarray::Array2;

/// A fresh, empty folder under the system temp dir, unique to this process and test.
fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "hybridopt-test-plot-report-{}-{test}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Names of all entries (files, folders, hidden ones included) in `dir`.
fn entries(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn sample_figure() -> Figure {
    let t: Vec<f64> = (0..=400).map(|i| i as f64 * 0.01).collect();
    // A bouncing ball: height with impacts, and the energy decaying over the bounces.
    let mut h = Vec::new();
    let mut energy = Vec::new();
    let (mut y, mut v, mut e) = (1.0f64, 0.0f64, 9.81f64);
    for _ in &t {
        h.push(y);
        energy.push(e);
        v -= 9.81 * 0.01;
        y += v * 0.01;
        if y < 0.0 {
            y = -y;
            v *= -0.8;
            e *= 0.64;
        }
    }
    let vel: Vec<f64> = h.windows(2).map(|w| (w[1] - w[0]) / 0.01).collect();
    Figure {
        title: "Bouncing ball: state and energy".into(),
        x_label: "time t [s]".into(),
        panels: vec![
            Panel {
                title: "State".into(),
                y_label: "height, velocity".into(),
                series: vec![
                    Series::new("height h", t.clone(), h, LineKind::Solid),
                    Series::new("velocity v", t[..400].to_vec(), vel, LineKind::Dashed),
                ],
                log_y: false,
            },
            Panel {
                title: "Energy (log scale)".into(),
                y_label: "E [J/kg]".into(),
                series: vec![Series::new(
                    "mechanical energy",
                    t.iter().step_by(10).copied().collect(),
                    energy.iter().step_by(10).copied().collect(),
                    LineKind::Points,
                )],
                log_y: true,
            },
        ],
        markers: vec![
            Marker::new(0.4515, Some("impact 1".into())),
            Marker::new(1.174, Some("impact 2".into())),
            Marker::new(1.75, None),
        ],
    }
}

#[test]
fn figure_renders_png_and_svg() {
    let dir = temp_dir("figure");
    let png = dir.join("sub").join("figure.png");
    let svg = dir.join("sub").join("figure.svg");
    write_figure(&sample_figure(), &png, Some(&svg)).unwrap();

    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(
        bytes.len() > 5_000,
        "PNG suspiciously small: {} bytes",
        bytes.len()
    );

    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("<svg"));
    assert!(text.contains("mechanical energy"), "legend label missing");
    assert!(text.contains("height h"));
    assert!(text.contains("impact 1"), "marker label missing");

    // Only the two figures: no temporary files left behind.
    assert_eq!(
        entries(&dir.join("sub")),
        ["figure.png", "figure.svg"].map(String::from).into()
    );
    // A second rendering replaces the files.
    write_figure(&sample_figure(), &png, None).unwrap();
    assert_eq!(entries(&dir.join("sub")).len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

fn degenerate_figures() -> Vec<Figure> {
    let nan = f64::NAN;
    vec![
        // Empty series, constant series, NaNs/infinities, log of negatives and zeros.
        Figure {
            title: "degenerate".into(),
            x_label: "x".into(),
            panels: vec![
                Panel {
                    title: "empty and constant".into(),
                    y_label: "y".into(),
                    series: vec![
                        Series::new("empty", vec![], vec![], LineKind::Solid),
                        Series::new(
                            "constant",
                            vec![0.0, 1.0, 2.0],
                            vec![3.0; 3],
                            LineKind::Solid,
                        ),
                        Series::new("zero", vec![0.0, 2.0], vec![0.0, 0.0], LineKind::Dashed),
                        Series::new(
                            "mismatched",
                            vec![0.0, 1.0, 2.0],
                            vec![1.0],
                            LineKind::Points,
                        ),
                    ],
                    log_y: false,
                },
                Panel {
                    title: "NaN".into(),
                    y_label: String::new(),
                    series: vec![Series::new(
                        "nan",
                        vec![0.0, 1.0, nan, 3.0, 4.0, f64::INFINITY],
                        vec![1.0, nan, 2.0, 3.0, f64::NEG_INFINITY, 1.0],
                        LineKind::Solid,
                    )],
                    log_y: false,
                },
                Panel {
                    title: "log of negatives".into(),
                    y_label: "log".into(),
                    series: vec![
                        Series::new(
                            "negative",
                            vec![0.0, 1.0, 2.0],
                            vec![-1.0, 0.0, -3.0],
                            LineKind::Solid,
                        ),
                        Series::new(
                            "mixed",
                            vec![0.0, 1.0, 2.0],
                            vec![-1.0, 1e-3, 5.0],
                            LineKind::Solid,
                        ),
                    ],
                    log_y: true,
                },
                Panel {
                    title: "log of nothing positive".into(),
                    y_label: "fallback".into(),
                    series: vec![Series::new(
                        "neg",
                        vec![0.0, 1.0],
                        vec![-1.0, -2.0],
                        LineKind::Points,
                    )],
                    log_y: true,
                },
                Panel {
                    title: "log constant".into(),
                    y_label: String::new(),
                    series: vec![Series::new(
                        "c",
                        vec![0.0, 1.0],
                        vec![7.0, 7.0],
                        LineKind::Solid,
                    )],
                    log_y: true,
                },
            ],
            markers: vec![
                Marker::new(nan, Some("nan".into())),
                Marker::new(1.0, None),
                Marker::new(1e9, Some("far".into())),
            ],
        },
        // Nothing at all.
        Figure::default(),
        // Panels without any data, a single point, huge values.
        Figure {
            title: String::new(),
            x_label: String::new(),
            panels: vec![
                Panel::default(),
                Panel {
                    series: vec![Series::new(
                        "one point",
                        vec![1.0],
                        vec![2.0],
                        LineKind::Solid,
                    )],
                    ..Panel::default()
                },
                Panel {
                    series: vec![Series::new(
                        "huge",
                        vec![-1e300, 1e300],
                        vec![-1e308, 1e308],
                        LineKind::Solid,
                    )],
                    log_y: true,
                    ..Panel::default()
                },
            ],
            markers: vec![Marker::new(0.5, Some("only marker".into()))],
        },
    ]
}

#[test]
fn degenerate_data_does_not_fail() {
    let dir = temp_dir("degenerate");
    let figs = degenerate_figures();
    for (i, fig) in figs.iter().enumerate() {
        let png = dir.join(format!("degenerate-{i}.png"));
        let svg = dir.join(format!("degenerate-{i}.svg"));
        write_figure(fig, &png, Some(&svg)).unwrap_or_else(|e| panic!("figure {i}: {e}"));
        assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn staging_commit_drop_and_replace() {
    let dir = temp_dir("staging");
    let final_dir = dir.join("nested").join("results");

    // First results.
    let s = Staging::new(&final_dir).unwrap();
    s.write_bytes("a.txt", b"first").unwrap();
    s.write_json(
        "summary.json",
        &serde_json::json!({"cost": 1.5, "ok": true}),
    )
    .unwrap();
    write_figure(&sample_figure(), &s.path("plot.png"), None).unwrap();
    assert!(!final_dir.exists(), "nothing is visible before commit");
    assert_eq!(s.commit().unwrap(), final_dir);
    assert_eq!(
        entries(&final_dir),
        ["a.txt", "plot.png", "summary.json"]
            .map(String::from)
            .into()
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(final_dir.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(json["cost"], 1.5);
    // Only the final folder is left in the parent: no staging or old folders.
    assert_eq!(
        entries(final_dir.parent().unwrap()),
        ["results".to_string()].into()
    );

    // A second attempt that fails (dropped without commit) leaves the first intact.
    {
        let s = Staging::new(&final_dir).unwrap();
        s.write_bytes("a.txt", b"second, half done").unwrap();
        s.write_bytes("partial.txt", b"partial").unwrap();
        assert!(s.dir().exists());
    }
    assert_eq!(std::fs::read(final_dir.join("a.txt")).unwrap(), b"first");
    assert!(!final_dir.join("partial.txt").exists());
    assert_eq!(
        entries(final_dir.parent().unwrap()),
        ["results".to_string()].into()
    );

    // Committing over existing results replaces them entirely.
    let s = Staging::new(&final_dir).unwrap();
    s.write_bytes("b.txt", b"third").unwrap();
    s.write_bytes("sub/c.txt", b"nested").unwrap();
    s.commit().unwrap();
    assert_eq!(
        entries(&final_dir),
        ["b.txt", "sub"].map(String::from).into()
    );
    assert_eq!(
        std::fs::read(final_dir.join("sub/c.txt")).unwrap(),
        b"nested"
    );
    assert_eq!(
        entries(final_dir.parent().unwrap()),
        ["results".to_string()].into()
    );

    // write_atomic: creates parents, replaces, leaves no temporary file.
    let f = dir.join("x").join("y").join("file.txt");
    write_atomic(&f, b"one").unwrap();
    write_atomic(&f, b"two").unwrap();
    assert_eq!(std::fs::read(&f).unwrap(), b"two");
    assert_eq!(
        entries(f.parent().unwrap()),
        ["file.txt".to_string()].into()
    );

    // Errors name the path.
    let blocker = dir.join("blocker");
    std::fs::write(&blocker, b"a file, not a folder").unwrap();
    let err = write_atomic(&blocker.join("f.txt"), b"x").unwrap_err();
    assert!(err.to_string().contains("blocker"), "{err}");
    let err = Staging::new(&blocker.join("results")).unwrap_err();
    assert!(err.to_string().contains("blocker"), "{err}");

    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn csv_round_trips_exactly() {
    let dir = temp_dir("csv");
    let final_dir = dir.join("out");
    let values = [
        0.0,
        -0.0,
        1.0,
        0.1,
        1.0 / 3.0,
        -2.0 / 7.0,
        std::f64::consts::PI * 1e-10,
        6.02214076e23,
        1e-300,
        5e-324,
        f64::MAX,
        f64::MIN_POSITIVE,
        -123456.789,
        0.1 + 0.2,
        f64::NAN,
        f64::INFINITY,
    ];
    let rows = Array2::from_shape_vec((4, 4), values.to_vec()).unwrap();
    let header: Vec<String> = ["t", "x, with comma", "v", "\"quoted\""]
        .map(String::from)
        .to_vec();
    let s = Staging::new(&final_dir).unwrap();
    s.write_csv("data.csv", &header, &rows).unwrap();
    // A header that does not match the columns is an error naming the file.
    let err = s.write_csv("bad.csv", &header[..2], &rows).unwrap_err();
    assert!(err.to_string().contains("bad.csv"), "{err}");
    s.commit().unwrap();

    let mut reader = csv::Reader::from_path(final_dir.join("data.csv")).unwrap();
    let got_header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(got_header, header);
    let mut parsed = Vec::new();
    for rec in reader.records() {
        let rec = rec.unwrap();
        assert_eq!(rec.len(), 4);
        for field in rec.iter() {
            parsed.push(field.parse::<f64>().unwrap());
        }
    }
    assert_eq!(parsed.len(), values.len());
    for (a, b) in parsed.iter().zip(&values) {
        if b.is_nan() {
            assert!(a.is_nan());
        } else {
            assert_eq!(a.to_bits(), b.to_bits(), "{a} != {b}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Renders the sample and degenerate figures into a fixed folder for visual inspection
/// (`cargo test --test plot_report -- --ignored`).
#[test]
#[ignore]
fn render_for_inspection() {
    let dir = std::env::temp_dir().join("hybridopt-plot-inspection");
    std::fs::create_dir_all(&dir).unwrap();
    write_figure(
        &sample_figure(),
        &dir.join("sample.png"),
        Some(&dir.join("sample.svg")),
    )
    .unwrap();
    for (i, fig) in degenerate_figures().iter().enumerate() {
        write_figure(fig, &dir.join(format!("degenerate-{i}.png")), None).unwrap();
    }
    println!("{}", dir.display());
}
