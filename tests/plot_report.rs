//! Figures (PNG/SVG with embedded fonts) and atomic results folders.

use crate::common;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use hybridopt::output::{write_atomic, Staging};
use hybridopt::plot::{write_figure, Figure, LineKind, Marker, Panel, Series};
use ndarray::Array2;

/// A fresh, empty folder under the system temp dir, unique to this process and test.
fn temp_dir(test: &str) -> PathBuf {
    common::scratch("plot-report", test, true)
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

    // Committing over existing results adds and replaces the files it wrote and keeps
    // the others (a run never deletes what it did not write).
    let s = Staging::new(&final_dir).unwrap();
    s.write_bytes("b.txt", b"third").unwrap();
    s.write_bytes("sub/c.txt", b"nested").unwrap();
    s.write_bytes("summary.json", b"{}").unwrap();
    s.commit().unwrap();
    assert_eq!(
        entries(&final_dir),
        ["a.txt", "b.txt", "plot.png", "sub", "summary.json"]
            .map(String::from)
            .into()
    );
    assert_eq!(std::fs::read(final_dir.join("a.txt")).unwrap(), b"first");
    assert_eq!(
        std::fs::read(final_dir.join("summary.json")).unwrap(),
        b"{}"
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
/// (`cargo test --release --test suite plot_report:: -- --ignored`).
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

/// A log axis whose data spans less than a decade still gets at least two distinct tick
/// labels (five_bar_stiffness's cost, 5.28e-3 … 8.9e-3, had a single "0.01").
#[test]
fn narrow_log_spans_get_several_tick_labels() {
    use hybridopt::plot::{log_tick_labels, log_ticks};
    for (lo, hi) in [
        (5.18e-3, 9.12e-3),
        (1.1e-3, 9.0e-3),
        (0.9e-2, 2.5e-2),
        (3.0e4, 7.5e4),
        (1.5e-8, 2.5e-8),
    ] {
        let labels = log_tick_labels(lo, hi);
        let distinct: BTreeSet<&String> = labels.iter().collect();
        assert!(distinct.len() >= 2, "[{lo}, {hi}]: {labels:?}");
        assert!(
            log_ticks(lo, hi).iter().all(|&t| t >= lo && t <= hi),
            "[{lo}, {hi}]"
        );
    }
    assert_eq!(
        log_tick_labels(5.18e-3, 9.12e-3),
        ["0.006", "0.007", "0.008", "0.009"]
    );
    // a wide span keeps decade labels, at most 8 of them
    let wide = log_tick_labels(1e-12, 1.0);
    assert!(wide.len() >= 2 && wide.len() <= 8, "{wide:?}");
    assert!(wide
        .iter()
        .all(|l| l.starts_with("1e") || l == "1" || l == "0.01"));
    // too narrow for two of 1…9 × 10^k: evenly spaced ticks, labelled apart
    let tight = log_tick_labels(5.2776e-3, 5.2790e-3);
    assert!(tight.len() >= 3, "{tight:?}");
    let distinct: BTreeSet<&String> = tight.iter().collect();
    assert_eq!(distinct.len(), tight.len(), "{tight:?}");
}

/// The convergence figure of a cost that spans less than a decade (and of one that is
/// flat) renders, and its legend gives the final cost.
#[test]
fn convergence_figure_of_a_narrow_span_renders() {
    use hybridopt::optimize::HistoryRow;
    use hybridopt::output::artifacts::convergence_figure;
    let dir = temp_dir("convergence");
    for (tag, costs) in [
        (
            "narrow",
            vec![8.9e-3, 5.9e-3, 5.3e-3, 5.2776e-3, 5.2776036e-3],
        ),
        ("flat", vec![5.2776036e-3; 4]),
    ] {
        let history: Vec<HistoryRow> = costs
            .iter()
            .enumerate()
            .map(|(i, &c)| HistoryRow {
                max_violation: None,
                defect: None,
                iteration: i as u64,
                cost: c,
                grad_norm: 10f64.powi(-2 * i as i32),
                step: 0.1,
                theta: vec![1.0],
            })
            .collect();
        let fig = convergence_figure("convergence", &history);
        assert_eq!(
            fig.panels[0].series[0].label,
            format!("cost (final {:.8e})", costs.last().unwrap())
        );
        let png = dir.join(format!("{tag}.png"));
        write_figure(&fig, &png, Some(&dir.join(format!("{tag}.svg")))).unwrap();
        assert!(std::fs::metadata(&png).unwrap().len() > 1000);
        let svg = std::fs::read_to_string(dir.join(format!("{tag}.svg"))).unwrap();
        if tag == "narrow" {
            for label in ["0.006", "0.007", "0.008"] {
                assert!(
                    svg.contains(&format!("\n{label}\n</text>")),
                    "{label} in the svg"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The seed-style figure marks central FD at tf (where the direct Z(t) arrives) and at t0
/// (where the adjoint μ(t) arrives): for parameters that x0 does not depend on (g, e, c of
/// the ball), μ_p(t0) and Z_p(tf) both equal the FD value.
#[test]
fn seed_figure_marks_fd_at_both_ends() {
    use hybridopt::cost::{Objective, Quantity, Term};
    use hybridopt::output::artifacts::seed_figure;
    use hybridopt::sensitivity::fd_gradients;
    use hybridopt::setup::Setup;
    use hybridopt::systems::BouncingBall;
    use hybridopt::testing::adjoint_with_history;
    use hybridopt::testing::forward_sensitivity;
    let ball = BouncingBall;
    // a running cost alone, ∫ y² dt, so that Z(tf) is the whole dψ/dθ
    let cost = Objective::new(
        "int_y2",
        vec![Term::squared(Quantity::Integral { output: 0 }, 0.0, 1.0)],
    );
    let mut setup = Setup::new(&ball, 0.0, 3.0, None, vec![cost]);
    setup = setup.to_builder().tolerances(1e-10, 1e-12).build();
    let theta = BouncingBall::default_params();
    let fw = forward_sensitivity(&setup, &theta).unwrap();
    let traj = setup.simulate_for_adjoint(&theta).unwrap();
    let (_, hist) = adjoint_with_history(&setup, &traj, &theta).unwrap();
    let fd = fd_gradients(&setup, &theta, Default::default()).unwrap();
    let (fig, z, mu) = seed_figure(&setup, &fw, 0, &hist[0], &fd[0]);
    for (p, name) in ["g", "e", "c"].iter().enumerate() {
        let panel = &fig.panels[p];
        let fd_series = panel
            .series
            .iter()
            .find(|s| s.label.starts_with("central FD"))
            .expect("an FD series");
        assert_eq!(fd_series.style, LineKind::Points);
        assert_eq!(fd_series.x, [traj.t_final, 0.0], "{name}: at tf and t0");
        assert_eq!(fd_series.y, [fd[0][p], fd[0][p]]);
        let mu_t0 = mu.rows[(0, 1 + p)];
        assert_eq!(mu.rows[(0, 0)], 0.0, "μ's table starts at t0");
        let z_tf = z.rows[(z.rows.nrows() - 1, 1 + p)];
        let tol = 1e-5 * fd[0][p].abs().max(1e-3);
        assert!(
            (mu_t0 - fd[0][p]).abs() < tol,
            "{name}: μ(t0) {mu_t0} vs FD {}",
            fd[0][p]
        );
        assert!(
            (z_tf - fd[0][p]).abs() < tol,
            "{name}: Z(tf) {z_tf} vs FD {}",
            fd[0][p]
        );
    }
}
