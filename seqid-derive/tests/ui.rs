//! Compile-time behaviour of `#[derive(seqid::Document)]`: the error each mistake gets,
//! with its span. Only cases that must fail live here, so that trybuild checks them all
//! in one `cargo check` (a `pass` case would make it build every dependency, and each
//! case apart); what the derive accepts is ordinary code in `tests/it/derive`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
}
