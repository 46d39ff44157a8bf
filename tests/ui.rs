//! Compile-time behaviour of `#[derive(seqid::Document)]`: what it accepts, what the
//! generated constants hold, and the error each mistake gets.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    t.compile_fail("tests/ui/fail/*.rs");
}
