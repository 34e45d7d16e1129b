//! The README's "Library use" program is `examples/custom_system.rs`: the README's copy
//! runs as a doctest (`readme_library_use` in src/lib.rs), the example is built by `cargo
//! test`, and this test keeps the two equal.

#[test]
fn readme_library_use_is_the_example() {
    let root = env!("CARGO_MANIFEST_DIR");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).expect("README.md");
    let example = std::fs::read_to_string(format!("{root}/examples/custom_system.rs"))
        .expect("examples/custom_system.rs");
    let section = &readme[readme
        .find("## Library use")
        .expect("a Library use section")..];
    let start = section.find("```rust\n").expect("a rust block") + "```rust\n".len();
    let block = &section[start..start + section[start..].find("```").expect("closed")];
    let body = &example[example.find("use hybridopt::").expect("the program")..];
    assert_eq!(
        block, body,
        "README's Library use and examples/custom_system.rs differ"
    );
}
