//! The library guide's program (docs/guide/library.md, "Write your own system") is
//! `examples/custom_system.rs`: the guide's copy runs as a doctest (`guide_library` in
//! src/lib.rs), the example is built by `cargo test`, and this test keeps the two equal.

#[test]
fn library_guide_program_is_the_example() {
    let root = env!("CARGO_MANIFEST_DIR");
    let guide = std::fs::read_to_string(format!("{root}/docs/guide/library.md"))
        .expect("docs/guide/library.md");
    let example = std::fs::read_to_string(format!("{root}/examples/custom_system.rs"))
        .expect("examples/custom_system.rs");
    let section = &guide[guide
        .find("## Write your own system")
        .expect("a 'Write your own system' section")..];
    let start = section.find("```rust\n").expect("a rust block") + "```rust\n".len();
    let block = &section[start..start + section[start..].find("```").expect("closed")];
    let body = &example[example.find("use hybridopt::").expect("the program")..];
    assert_eq!(
        block, body,
        "docs/guide/library.md's program and examples/custom_system.rs differ"
    );
}
