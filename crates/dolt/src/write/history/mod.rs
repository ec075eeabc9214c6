//! Version control as Dolt does it: `commit` (parent closure and height as Dolt computes
//! them), `ancestry` (merge bases from closures), `branches` (heads, working sets,
//! `repo_state.json`), `tags` (tag objects), `working` (branches' working roots changed table
//! by table, saved as working sets or committed), `status` (`dolt status`), `checkout_carry`
//! (uncommitted changes carried by `checkout`, foreign keys both sides changed merged per
//! table as `dolt checkout` merges them). Public through [`crate::write::vc`].

pub(crate) mod ancestry;
pub(crate) mod branches;
pub(in crate::write) mod checkout_carry;
pub(crate) mod commit;
pub mod repo_state;
pub(crate) mod status;
pub(crate) mod tags;
pub(crate) mod working;
