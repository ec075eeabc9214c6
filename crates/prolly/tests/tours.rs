//! The tours of the README and issue #35, run as tests so that CI runs them.

#[path = "../examples/tour.rs"]
mod tour;

#[test]
fn native_tour_runs() {
    tour::main().expect("the native tour");
}
